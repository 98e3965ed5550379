import { Hono, type Context } from 'hono';
import { APPROVAL_STATUSES, ApprovalDecisionBody, ApprovalRequest, type ApprovalStatus } from '../../../contracts/approvals.ts';
import { badRequest } from '../../../shared/errors.ts';
import { readJson } from '../../../shared/http.ts';
import { doc } from '../../../shared/route-doc.ts';
import { inTenant, pageOf, sendList, tenantOf } from '../../crud/index.ts';
import type { IdentityEnv } from '../identity/index.ts';
import { listApprovals } from './approvals.repo.ts';
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
    .get('/approvals', (c) => list(c))
    .get('/approvals/:id', async (c) => c.json(await getOne(deps, tenantOf(c), c.req.param('id'))))
    .post('/runs/self/approvals', doc({ body: ApprovalRequest }), async (c) => c.json(await requestApproval(deps, c.get('principal'), await readJson(c, ApprovalRequest)), 201))
    .get('/runs/:id/approvals', (c) => list(c, c.req.param('id')))
    .post('/runs/:id/approvals/:approvalId', doc({ body: ApprovalDecisionBody }), async (c) =>
      c.json(await decide(deps, c.get('principal'), c.req.param('id'), c.req.param('approvalId'), await readJson(c, ApprovalDecisionBody))),
    );
}
