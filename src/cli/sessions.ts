import { defineCommand } from 'citty';
import { globalArgs, limitArg } from './args.ts';
import { printList, readLimit } from './client/list.ts';
import { openSession } from './client/session.ts';

interface SessionRecord {
  id: string;
  profile: string;
  origin: 'api' | 'v1';
  status: string;
  runCount: number;
  lastUsedAt: string;
  lastPrompt: string | null;
}

/** `svc sessions`: the most recently created sessions; a /v1 agent session has no saved profile and says so. */
export default defineCommand({
  meta: { name: 'sessions', description: 'List sessions' },
  args: { ...globalArgs, ...limitArg, q: { type: 'string', description: 'only sessions whose id or profile contains this' } },
  async run({ args }) {
    const limit = readLimit(args.limit);
    const { out, api } = openSession(args, { needKey: true });
    const sessions = await api.get<SessionRecord[]>(`/api/sessions?limit=${limit}${args.q ? `&q=${encodeURIComponent(args.q)}` : ''}`);
    printList(out, sessions, (s) => [s.id, s.origin === 'v1' ? '(/v1 agent session)' : s.profile, s.status, s.runCount, s.lastUsedAt], ['id', 'profile', 'status', 'runs', 'last used']);
  },
});
