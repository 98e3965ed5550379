import { Hono } from 'hono';
import { HeldDecision } from '../../../contracts/approvals.ts';
import { notFound } from '../../../shared/errors.ts';
import { readJson } from '../../../shared/http.ts';
import type { RunnerEnv } from '../runner.context.ts';
import type { Approvals } from './approvals.service.ts';

/**
 * `POST /runner/sessions/{id}/approvals/{approvalId}`: the conductor delivers a decision (a person's, or an expiry) to
 * the call held here. 204 when a call took it; 404 when none waits on it (the run ended, or this runner restarted).
 */
export function approvalRoutes(deps: { approvals: Approvals }): Hono<RunnerEnv> {
  return new Hono<RunnerEnv>().post('/runner/sessions/:id/approvals/:approvalId', async (c) => {
    const decision = await readJson(c, HeldDecision);
    if (!deps.approvals.deliver(c.get('tenant'), c.req.param('id'), c.req.param('approvalId'), decision)) throw notFound(`no call waits on approval ${c.req.param('approvalId')}`);
    return c.body(null, 204);
  });
}
