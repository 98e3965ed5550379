import { defineCommand } from 'citty';
import type { Approval } from '../contracts/approvals.ts';
import { globalArgs } from './args.ts';
import { openSession } from './client/session.ts';

/** `svc approve <approval-id> [--deny] [--message text]`: decides a pending approval (members and above). */
export default defineCommand({
  meta: { name: 'approve', description: 'Approve (or --deny) a tool call that waits for a person' },
  args: {
    ...globalArgs,
    id: { type: 'positional', description: 'approval id (apr_…)', required: true },
    deny: { type: 'boolean', description: 'deny instead of approve: the model reads the denial and the message' },
    message: { type: 'string', description: 'a note the model reads with the decision' },
  },
  async run({ args }) {
    const { out, api } = openSession(args, { needKey: true });
    const found = await api.get<Approval>(`/api/approvals/${encodeURIComponent(args.id)}`);
    const body = { decision: args.deny ? 'deny' : 'approve', ...(args.message !== undefined ? { message: args.message } : {}) };
    const path = `/api/runs/${encodeURIComponent(found.runId)}/approvals/${encodeURIComponent(args.id)}`;
    const decided = (await api.request<Approval & { delivered: boolean }>('POST', path, { body })).data;
    if (out.json) return out.data(decided);
    out.log.success(`${decided.status} ${decided.toolName} for run ${decided.runId}${decided.delivered ? '' : ' (recorded; no runner holds the call any longer)'}`);
  },
});
