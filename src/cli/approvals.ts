import { defineCommand } from 'citty';
import type { Approval } from '../contracts/approvals.ts';
import { globalArgs, limitArg } from './args.ts';
import { printList, readLimit } from './client/list.ts';
import { openSession } from './client/session.ts';

/** `svc approvals [--status s]`: tool calls waiting for a person (`GET /api/approvals`), pending ones by default. */
export default defineCommand({
  meta: { name: 'approvals', description: 'List approvals of tool calls (pending by default)' },
  args: { ...globalArgs, ...limitArg, status: { type: 'string', description: 'pending (default), approved, denied, expired, cancelled or all' } },
  async run({ args }) {
    const { out, api } = openSession(args, { needKey: true });
    const status = args.status ?? 'pending';
    const query = `limit=${readLimit(args.limit)}${status === 'all' ? '' : `&status=${encodeURIComponent(status)}`}`;
    const items = await api.get<Approval[]>(`/api/approvals?${query}`);
    printList(out, items, (a) => [a.id, a.status, a.runId, a.toolName, JSON.stringify(a.input), a.expiresAt], ['id', 'status', 'run', 'tool', 'input', 'expires']);
  },
});
