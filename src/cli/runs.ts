import { defineCommand } from 'citty';
import { globalArgs, limitArg } from './args.ts';
import { printList, readLimit } from './client/list.ts';
import { openSession } from './client/session.ts';

interface RunSummary {
  id: string;
  status: string;
  subTask: { profile?: string; sessionId?: string; prompt?: string };
  startedAt: string;
  finishedAt: string | null;
}

/** `svc runs [--status queued]`: the newest runs, optionally of one status. */
export default defineCommand({
  meta: { name: 'runs', description: 'List runs, newest first' },
  args: { ...globalArgs, ...limitArg, status: { type: 'string', description: 'only runs of this status (queued, running, waiting (for an approval), ok, error, cancelled, interrupted)', valueHint: 'status' } },
  async run({ args }) {
    const limit = readLimit(args.limit);
    const { out, api } = openSession(args, { needKey: true });
    const status = args.status ? `&status=${encodeURIComponent(String(args.status))}` : '';
    const runs = await api.get<RunSummary[]>(`/api/runs?limit=${limit}${status}`);
    printList(out, runs, (r) => [r.id, r.status, r.subTask?.profile ?? null, r.subTask?.sessionId ?? null, r.startedAt], ['id', 'status', 'profile', 'session', 'started']);
  },
});
