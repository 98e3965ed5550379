import { Hono } from 'hono';
import { badRequest } from '../../../shared/errors.ts';
import { readJson } from '../../../shared/http.ts';
import { doc } from '../../../shared/route-doc.ts';
import { sseResponse } from '../../../shared/sse.ts';
import { pageOf, sendList, tenantOf } from '../../crud/index.ts';
import type { IdentityEnv } from '../identity/index.ts';
import type { EngineDeps } from './engine.ts';
import type { PlanFeed } from './plan-stream.ts';
import * as v from 'valibot';
import { CreateRunBody, NodeUpdateBody, PlanStreamQuery, RepairBody, WorkflowRunAnswer, WorkflowRunsQuery, WorkflowRunSummary } from './workflow.schema.ts';
import { cancelWorkflowRun, createWorkflowRun, listRuns, repairWorkflowRun, snapshot, startWorkflowRun, updateNode } from './workflows.service.ts';

/** Workflow lists: `limit` default and cap 200 (seed 000 Limits), `offset`, always X-Total-Count. */
export const WORKFLOW_LISTS = { defaultLimit: 200, max: 200 };

/** `/api/workflows/runs`: create, list, get, start, cancel, repair, set a node, and the plan stream. */
export function runRoutes(deps: EngineDeps & { feed: PlanFeed; keepAliveMs: number }): Hono<IdentityEnv> {
  return new Hono<IdentityEnv>()
    .post('/', doc({ summary: 'Create a workflow run', description: 'A graph of profile runs (`nodes` with `dependsOn`, or a saved `definitionId`), started at once unless `autoStart` is false. Every node\'s profile must exist.', body: CreateRunBody, response: WorkflowRunAnswer, status: 202 }), async (c) => c.json({ workflowRun: await createWorkflowRun(deps, tenantOf(c), await readJson(c, CreateRunBody)) }, 202))
    .get('/', doc({ summary: 'List workflow runs', description: 'The tenant\'s workflow runs, newest first, 200 a page by default (and at most), with X-Total-Count; filter by status, name or schedule.', query: WorkflowRunsQuery, response: v.array(WorkflowRunSummary) }), async (c) => {
      const page = pageOf(c, WORKFLOW_LISTS);
      return sendList(c, page, await listRuns(deps, tenantOf(c), { status: c.req.query('status') || undefined, name: c.req.query('name') || undefined, scheduleId: c.req.query('scheduleId') || undefined }, page));
    })
    .get('/:id', doc({ summary: 'Get a workflow run', description: 'The run\'s snapshot: its status and every node with its status, run, output and error.', response: WorkflowRunAnswer }), async (c) => c.json({ workflowRun: await snapshot(deps, tenantOf(c), c.req.param('id')) }))
    .post('/:id/start', doc({ summary: 'Start a workflow run', description: 'Starts a run created with `autoStart: false`; any other run is answered as it is.', response: WorkflowRunAnswer, status: 202 }), async (c) => c.json({ workflowRun: await startWorkflowRun(deps, tenantOf(c), c.req.param('id')) }, 202))
    .post('/:id/cancel', doc({ summary: 'Cancel a workflow run', description: 'Cancels the run, its pending and running nodes and their runs; a finished run keeps its status.', response: WorkflowRunAnswer, status: 202 }), async (c) => c.json({ workflowRun: await cancelWorkflowRun(deps, tenantOf(c), c.req.param('id')) }, 202))
    .post('/:id/repair', doc({ summary: 'Repair a paused workflow run', description: 'For a run paused on a failed node (409 otherwise): `retry_node`, `replace_node` (new profile, prompt, dependencies or onError), `add_dependency`, or `abort` (the run fails). The run resumes once no node in error holds it.', body: RepairBody, response: WorkflowRunAnswer, status: 202, errors: [409] }), async (c) => c.json({ workflowRun: await repairWorkflowRun(deps, tenantOf(c), c.req.param('id'), await readJson(c, RepairBody)) }, 202))
    .post('/:id/nodes/:nodeId', doc({ summary: 'Set a node that has not started', description: 'Ends a pending or ready node by hand with `status` (ok, error, skipped, cancelled) and an optional `output`, as if it had run.', body: NodeUpdateBody, response: WorkflowRunAnswer, status: 202 }), async (c) => {
      const body = await readJson(c, NodeUpdateBody);
      return c.json({ workflowRun: await updateNode(deps, tenantOf(c), c.req.param('id'), c.req.param('nodeId'), body) }, 202);
    })
    .get('/:id/stream', doc({ summary: 'Follow a workflow run', description: 'Server-sent events: the run\'s snapshot, then a `plan_status` event for every change of the run or a node, until the run ends. `Last-Event-ID` (or `lastEventId`) resumes after an event.', query: PlanStreamQuery, responds: 'text/event-stream' }), async (c) => {
      const raw = c.req.header('Last-Event-ID') ?? c.req.query('lastEventId');
      const after = raw === undefined || raw === '' ? undefined : Number(raw);
      if (after !== undefined && (!Number.isInteger(after) || after < 0)) throw badRequest('Last-Event-ID: expected a non-negative integer event id');
      const abort = new AbortController();
      const frames = await deps.feed.follow(tenantOf(c), c.req.param('id'), after, { keepAliveMs: deps.keepAliveMs, signal: abort.signal });
      return sseResponse(c, frames, (f) => f, abort);
    });
}
