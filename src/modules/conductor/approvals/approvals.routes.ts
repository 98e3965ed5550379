import { Hono, type Context } from 'hono';
import { APPROVAL_STATUSES, ApprovalDecisionBody, ApprovalRequest, type ApprovalStatus } from '../../../contracts/approvals.ts';
import { badRequest } from '../../../shared/errors.ts';
import { readJson } from '../../../shared/http.ts';
import { doc, type Documents } from '../../../shared/route-doc.ts';
import * as v from 'valibot';
import { inTenant, pageOf, PageQuery, sendList, tenantOf } from '../../crud/index.ts';

/** An approval: a tool call under an `ask` policy waiting for, or given, a person's decision. */
export const ApprovalSchema = v.object({
  id: v.string(),
  runId: v.string(),
  sessionId: v.string(),
  toolCallId: v.nullable(v.string()),
  toolName: v.string(),
  input: v.unknown(),
  status: v.picklist(APPROVAL_STATUSES),
  message: v.nullable(v.string()),
  decidedBy: v.nullable(v.string()),
  createdAt: v.string(),
  expiresAt: v.string(),
  decidedAt: v.nullable(v.string()),
});
const Decided = v.object({ ...ApprovalSchema.entries, delivered: v.pipe(v.boolean(), v.description('Whether the waiting run received the decision at once')) });
const Ticket = v.object({ approvalId: v.string(), expiresAt: v.string() });
const ListQuery = v.object({ ...PageQuery.entries, status: v.optional(v.picklist(APPROVAL_STATUSES)) });
import type { IdentityEnv } from '../identity/index.ts';
import { listApprovals } from './approvals.repo.ts';
import type { Approval } from '../../../contracts/approvals.ts';
import { decide, getOne, requestApproval, type ApprovalDeps } from './approvals.service.ts';

/**
 * `/api/approvals` (the tenant's, `?status=pending`, `?runId=`), `/api/approvals/{id}`, a run's
 * (`GET /api/runs/{id}/approvals`), a decision (`POST /api/runs/{id}/approvals/{approvalId}`: members and above, once),
 * and the runner's request for a pending row (`POST /api/runs/self/approvals`, run token only).
 */
export function approvalRoutes(deps: ApprovalDeps): Hono<IdentityEnv> {
  const list = (c: Context<IdentityEnv>, runId?: string) => {
    const status = c.req.query('status');
    if (status !== undefined && !(APPROVAL_STATUSES as readonly string[]).includes(status)) throw badRequest(`status: expected one of ${APPROVAL_STATUSES.join(', ')}`);
    const page = pageOf(c);
    return inTenant(deps.db, c, (tx) => listApprovals(tx, { status: status as ApprovalStatus | undefined, runId: runId ?? (c.req.query('runId') || undefined) }, page)).then((r) => sendList(c, page, r));
  };
  return new Hono<IdentityEnv>()
    .get('/approvals', doc({ summary: 'List approvals', description: 'The tenant’s approvals, newest first; `status=pending` for those waiting on a person, `runId` for one run’s.', query: v.object({ ...ListQuery.entries, runId: v.optional(v.string()) }), response: v.array(ApprovalSchema) }), (c) => list(c))
    .get('/approvals/:id', doc({ summary: 'Get an approval', description: 'One approval: the tool, its input, its status and who decided.', response: ApprovalSchema }), async (c) => c.json(await getOne(deps, tenantOf(c), c.req.param('id'))))
    .post('/runs/self/approvals', doc({ summary: 'Request an approval (run token)', description: 'Called by a run’s tools with the run’s own token: records a pending approval for a tool call and answers its id and expiry. Other credentials get 403; a run that is not running 409.', body: ApprovalRequest, response: Ticket, status: 201, errors: [409] }), async (c) => c.json(await requestApproval(deps, c.get('principal'), await readJson(c, ApprovalRequest)), 201))
    .get('/runs/:id/approvals', doc({ summary: 'List a run’s approvals', description: 'The approvals of one run, newest first, optionally of one status.', query: ListQuery, response: v.array(ApprovalSchema) }), (c) => list(c, c.req.param('id')))
    .post('/runs/:id/approvals/:approvalId', doc({ summary: 'Decide an approval', description: 'Approves (optionally with an edited input) or denies a pending approval, once: the waiting run goes on with the decision. 409 when it was already decided or expired. Members and above.', body: ApprovalDecisionBody, response: Decided, errors: [409] }), async (c) =>
      c.json(await decide(deps, c.get('principal'), c.req.param('id'), c.req.param('approvalId'), await readJson(c, ApprovalDecisionBody))),
    );
}

/** The answers' types fit what the reference documents (compile-time only). */
export type DocumentedApproval = Documents<typeof ApprovalSchema, Approval>;
