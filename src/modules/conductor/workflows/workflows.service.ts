import { withTenant, type Tx } from '../../../db/index.ts';
import { badRequest, conflict, notFound } from '../../../shared/errors.ts';
import { prefixedId } from '../../../shared/ids.ts';
import { getSpec } from '../profiles/profiles.repo.ts';
import { transition, type EngineDeps } from './engine.ts';
import { checkGraph } from './graph.ts';
import { isPendingNode, NODE, NODE_LABELS, RUN, RUN_LABELS, toWire, type NodeSpec, type WireRun } from './plan.ts';
import type { CreateRunBody, NodeBody, RepairBody } from './workflow.schema.ts';
import { insertWorkflowRun, listWorkflowRuns, loadWorkflowRun } from './workflows.repo.ts';
import { getDefinition } from './definitions.repo.ts';

/**
 * Workflow runs and their actions (seed 000 "Workflows", "States and transitions"): create (and start), start, cancel,
 * repair a paused run, set a node that has not started. Each action is one engine transition (engine.ts).
 */
export const toSpec = (n: NodeBody): NodeSpec => ({ id: n.id, profile: n.profile, prompt: n.prompt, dependsOn: [...new Set(n.dependsOn)], onError: n.onError });

/** Every profile the nodes name exists in the tenant: 400 naming the first that does not. */
export async function requireProfiles(tx: Tx, nodes: readonly Pick<NodeSpec, 'id' | 'profile'>[]): Promise<void> {
  const known = new Map<string, boolean>();
  for (const n of nodes) {
    if (!known.has(n.profile)) known.set(n.profile, (await getSpec(tx, 'profiles', n.profile)) !== undefined);
    if (!known.get(n.profile)) throw badRequest(`nodes: node ${n.id}: unknown_profile: ${n.profile}`);
  }
}

/** A graph a run or definition may hold: checkGraph, then its profiles. */
export async function checkNodes(tx: Tx, nodes: readonly NodeSpec[]): Promise<void> {
  checkGraph(nodes);
  await requireProfiles(tx, nodes);
}

/** Validates the nodes (or the definition's), inserts the run and its nodes, and starts it unless `autoStart` is false. */
export async function createWorkflowRun(deps: EngineDeps, tenantId: string, body: CreateRunBody): Promise<WireRun> {
  if (body.definitionId !== undefined && body.nodes !== undefined) throw badRequest('give either definitionId or nodes, not both');
  if (body.definitionId === undefined && body.nodes === undefined) throw badRequest('nodes: required (or a definitionId)');
  const id = prefixedId('wfr');
  await withTenant(deps.db, tenantId, async (tx) => {
    let nodes: NodeSpec[];
    let name = body.name;
    if (body.definitionId !== undefined) {
      const def = await getDefinition(tx, body.definitionId);
      if (!def) throw badRequest(`definitionId: unknown workflow definition: ${body.definitionId}`);
      nodes = def.nodes;
      name ??= def.name;
    } else nodes = body.nodes!.map(toSpec);
    await checkNodes(tx, nodes);
    await insertWorkflowRun(tx, { id, tenantId, name: name ?? '', definitionId: body.definitionId ?? null, input: body.input, nodes });
  });
  if (body.autoStart) await transition(deps, tenantId, id, (t) => t.start());
  return snapshot(deps, tenantId, id, { labels: true });
}

export async function snapshot(deps: EngineDeps, tenantId: string, id: string, opts: { labels?: boolean } = {}): Promise<WireRun> {
  const loaded = await withTenant(deps.db, tenantId, (tx) => loadWorkflowRun(tx, id));
  if (!loaded) throw notFound(`unknown workflow run: ${id}`);
  return toWire(loaded.state, opts);
}

export function listRuns(deps: EngineDeps, tenantId: string, filter: { status?: string; name?: string; scheduleId?: string }, page: { limit: number; offset: number }) {
  let status: number | undefined;
  if (filter.status !== undefined) {
    status = /^\d$/.test(filter.status) ? Number(filter.status) : RUN_LABELS.indexOf(filter.status as (typeof RUN_LABELS)[number]);
    if (!(status >= 0 && status < RUN_LABELS.length)) throw badRequest(`status: expected 0-5 or one of ${RUN_LABELS.join(', ')}`);
  }
  return withTenant(deps.db, tenantId, (tx) => listWorkflowRuns(tx, { status, name: filter.name, scheduleId: filter.scheduleId }, page));
}

/** Submits a pending run to the engine; any other run is answered as it is. */
export async function startWorkflowRun(deps: EngineDeps, tenantId: string, id: string): Promise<WireRun> {
  await transition(deps, tenantId, id, (t) => t.start());
  return snapshot(deps, tenantId, id, { labels: true });
}

/** Cancels the run, its pending and running nodes and their runs; a finished run keeps its status. */
export async function cancelWorkflowRun(deps: EngineDeps, tenantId: string, id: string): Promise<WireRun> {
  await transition(deps, tenantId, id, (t) => t.stop(RUN.cancelled));
  return snapshot(deps, tenantId, id);
}

/**
 * Repairs a paused run (409 otherwise). retry_node: a node in error runs again. replace_node: a node that has not run
 * to success gets a new profile, prompt, dependencies or onError and runs again. add_dependency: a node that has not
 * started (or ended in error) waits for more nodes. abort: the run fails, nodes not done are cancelled. The run resumes
 * once no node in error holds it.
 */
export async function repairWorkflowRun(deps: EngineDeps, tenantId: string, id: string, body: RepairBody): Promise<WireRun> {
  await transition(deps, tenantId, id, async (t, tx) => {
    if (t.state.status !== RUN.paused) throw conflict(`workflow run ${id} is ${RUN_LABELS[t.state.status]}; repair applies to a paused run`);
    if (body.action === 'abort') return t.stop(RUN.failed);
    if (body.nodeId === undefined) throw badRequest(`nodeId: required for ${body.action}`);
    const n = t.node(body.nodeId);
    if (!n) throw notFound(`unknown node: ${body.nodeId}`);
    const label = NODE_LABELS[n.status];
    if (body.action === 'retry_node') {
      if (n.status !== NODE.error) throw badRequest(`node ${n.id} is ${label}; retry_node applies to a node in error`);
      t.setNode(n, NODE.pending);
    } else if (body.action === 'replace_node') {
      if (!body.node) throw badRequest('node: required for replace_node ({profile?, prompt?, dependsOn?, onError?})');
      if (!(isPendingNode(n.status) || n.status === NODE.error || n.status === NODE.cancelled)) throw badRequest(`node ${n.id} is ${label}; replace_node applies to a node that has not started, or ended in error or cancelled`);
      const next: NodeSpec = {
        id: n.id,
        profile: body.node.profile ?? n.profile,
        prompt: body.node.prompt ?? n.prompt,
        dependsOn: body.node.dependsOn ? [...new Set(body.node.dependsOn)] : n.dependsOn,
        onError: body.node.onError ?? n.onError,
      };
      await checkNodes(tx, t.state.nodes.map((x) => (x.id === n.id ? next : x)));
      Object.assign(n, next);
      if (n.status === NODE.pending) t.touch(n);
      else t.setNode(n, NODE.pending);
    } else {
      if (!body.dependsOn?.length) throw badRequest('dependsOn: at least one node id for add_dependency');
      if (!(isPendingNode(n.status) || n.status === NODE.error)) throw badRequest(`node ${n.id} is ${label}; add_dependency applies to a node that has not started, or ended in error`);
      const dependsOn = [...new Set([...n.dependsOn, ...body.dependsOn])];
      checkGraph(t.state.nodes.map((x) => (x.id === n.id ? { ...x, dependsOn } : x)));
      n.dependsOn = dependsOn;
      if (n.status === NODE.pending) t.touch(n);
      else t.setNode(n, NODE.pending);
    }
    t.resumeIfClear();
    t.settle();
  });
  return snapshot(deps, tenantId, id);
}

const SETTABLE = { ok: NODE.ok, error: NODE.error, skipped: NODE.skipped, cancelled: NODE.cancelled } as const;

/** Sets a node that has not started (pending or ready) to ok (with its output), error, skipped or cancelled. */
export async function updateNode(deps: EngineDeps, tenantId: string, id: string, nodeId: string, body: { status: string; output?: string }): Promise<WireRun> {
  const status = SETTABLE[body.status as keyof typeof SETTABLE];
  if (status === undefined || !Object.hasOwn(SETTABLE, body.status)) throw badRequest(`status: expected one of ok, error, skipped, cancelled (got ${JSON.stringify(body.status)})`);
  await transition(deps, tenantId, id, (t) => {
    const n = t.node(nodeId);
    if (!n) throw notFound(`unknown node: ${nodeId}`);
    if (!isPendingNode(n.status)) throw badRequest(`node ${nodeId} is ${NODE_LABELS[n.status]}; only a pending or ready node can be set`);
    if (status === NODE.error) t.nodeFailed(n, 'set to error by a node update');
    else t.setNode(n, status, status === NODE.ok ? { output: body.output ?? '' } : {});
    t.settle();
  });
  return snapshot(deps, tenantId, id);
}
