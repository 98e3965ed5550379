import { Hono } from 'hono';
import { badRequest } from '../../../shared/errors.ts';
import { readJson } from '../../../shared/http.ts';
import { doc } from '../../../shared/route-doc.ts';
import { sseResponse } from '../../../shared/sse.ts';
import { pageOf, sendList, tenantOf } from '../../crud/index.ts';
import type { IdentityEnv } from '../identity/index.ts';
import type { EngineDeps } from './engine.ts';
import type { PlanFeed } from './plan-stream.ts';
import { CreateRunBody, NodeUpdateBody, RepairBody } from './workflow.schema.ts';
import { cancelWorkflowRun, createWorkflowRun, listRuns, repairWorkflowRun, snapshot, startWorkflowRun, updateNode } from './workflows.service.ts';

/** Workflow lists: `limit` default and cap 200 (seed 000 Limits), `offset`, always X-Total-Count. */
export const WORKFLOW_LISTS = { defaultLimit: 200, max: 200 };

/** `/api/workflows/runs`: create, list, get, start, cancel, repair, set a node, and the plan stream. */
export function runRoutes(deps: EngineDeps & { feed: PlanFeed; keepAliveMs: number }): Hono<IdentityEnv> {
  return new Hono<IdentityEnv>()
    .post('/', doc({ summary: 'Create a workflow run (started unless autoStart is false)', body: CreateRunBody }), async (c) => c.json({ workflowRun: await createWorkflowRun(deps, tenantOf(c), await readJson(c, CreateRunBody)) }, 202))
    .get('/', async (c) => {
      const page = pageOf(c, WORKFLOW_LISTS);
      return sendList(c, page, await listRuns(deps, tenantOf(c), { status: c.req.query('status') || undefined, name: c.req.query('name') || undefined, scheduleId: c.req.query('scheduleId') || undefined }, page));
    })
    .get('/:id', async (c) => c.json({ workflowRun: await snapshot(deps, tenantOf(c), c.req.param('id')) }))
    .post('/:id/start', async (c) => c.json({ workflowRun: await startWorkflowRun(deps, tenantOf(c), c.req.param('id')) }, 202))
    .post('/:id/cancel', async (c) => c.json({ workflowRun: await cancelWorkflowRun(deps, tenantOf(c), c.req.param('id')) }, 202))
    .post('/:id/repair', doc({ summary: 'Repair a paused workflow run', body: RepairBody }), async (c) => c.json({ workflowRun: await repairWorkflowRun(deps, tenantOf(c), c.req.param('id'), await readJson(c, RepairBody)) }, 202))
    .post('/:id/nodes/:nodeId', doc({ summary: 'Set a node that has not started', body: NodeUpdateBody }), async (c) => {
      const body = await readJson(c, NodeUpdateBody);
      return c.json({ workflowRun: await updateNode(deps, tenantOf(c), c.req.param('id'), c.req.param('nodeId'), body) }, 202);
    })
    .get('/:id/stream', doc({ summary: 'The plan stream: snapshot, then plan_status events', responds: 'text/event-stream' }), async (c) => {
      const raw = c.req.header('Last-Event-ID') ?? c.req.query('lastEventId');
      const after = raw === undefined || raw === '' ? undefined : Number(raw);
      if (after !== undefined && (!Number.isInteger(after) || after < 0)) throw badRequest('Last-Event-ID: expected a non-negative integer event id');
      const abort = new AbortController();
      const frames = await deps.feed.follow(tenantOf(c), c.req.param('id'), after, { keepAliveMs: deps.keepAliveMs, signal: abort.signal });
      return sseResponse(c, frames, (f) => f, abort);
    });
}
