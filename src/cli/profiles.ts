import { defineCommand } from 'citty';
import { globalArgs, limitArg } from './args.ts';
import { printList, readLimit } from './client/list.ts';
import { openSession } from './client/session.ts';

interface Profile {
  name: string;
  runtime: string;
  model?: string;
  workerMode?: string;
  pinned?: boolean;
}
interface HistoryEntry {
  version: number;
  changedAt: string;
  changedBy: string | null;
  changes: Record<string, { from: unknown; to: unknown }>;
}

const list = defineCommand({
  meta: { name: 'list', description: 'List profiles (pinned first)' },
  args: { ...globalArgs },
  async run({ args }) {
    const { out, api } = openSession(args, { needKey: true });
    const profiles = await api.get<Profile[]>('/api/profiles');
    printList(out, profiles, (p) => [p.name, p.runtime, p.model ?? null], ['name', 'runtime', 'model']);
  },
});

const history = defineCommand({
  meta: { name: 'history', description: "A profile's changes, newest first" },
  args: { ...globalArgs, ...limitArg, name: { type: 'positional', description: 'the profile', required: true } },
  async run({ args }) {
    const { out, api } = openSession(args, { needKey: true });
    const entries = await api.get<HistoryEntry[]>(`/api/profiles/${encodeURIComponent(args.name)}/history?limit=${readLimit(args.limit)}`);
    const show = (v: unknown) => (v === null || v === undefined ? '(none)' : JSON.stringify(v));
    printList(out, entries, (h) => [h.version, h.changedAt, h.changedBy ?? '-', Object.entries(h.changes).map(([k, c]) => `${k}: ${show(c.from)} → ${show(c.to)}`).join('; ')], ['version', 'changedAt', 'changedBy', 'changes']);
  },
});

/** `svc profiles [list]` (name, runtime, model) and `svc profiles history <name>`. */
export default defineCommand({
  meta: { name: 'profiles', description: 'List profiles, or show one profile\'s history' },
  args: { ...globalArgs },
  default: 'list',
  subCommands: { list, history },
});
