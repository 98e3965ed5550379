import type { Kysely } from 'kysely';
import { withSystem, withTenant, type Database, type DB, type Tx } from '../../../db/index.ts';
import { AppError, describeError, notFound } from '../../../shared/errors.ts';
import { prefixedId } from '../../../shared/ids.ts';
import type { Logger } from '../../../shared/log.ts';
import type { RunFinished } from '../hooks/index.ts';
import { cancelRun, createRun } from '../runs/index.ts';
import type { RunServices } from '../runs/index.ts';
import { renderPrompt } from './graph.ts';
import { NODE, RUN, Transition, type Changes, type NodeState, type WorkflowState } from './plan.ts';
import type { Jobs } from '../jobs/index.ts';
import { emitEvent, requestNotification } from '../notifications/index.ts';
import { errorText, finalText, findEndedUnrecorded, findUnstarted, loadWorkflowRun, runExists, saveTransition, workflowOfNodeRun } from './workflows.repo.ts';

/**
 * The engine: every transition of a workflow run happens in one transaction holding the run row's lock (FOR UPDATE),
 * so conductors take turns on a run and a node is claimed once. A claimed node has its run id already; its run is
 * created after the commit through the same service as POST /api/runs (gated, charged, listed). Its end comes back
 * through the `workflows` runFinished subscriber, a durable per-subscriber job: whichever conductor takes the job moves
 * the plan on. Nothing lives in memory between steps, so a conductor that dies loses nothing.
 */
export interface EngineDeps {
  db: Kysely<DB>;
  database: Database;
  runs: RunServices['deps'];
  log: Logger;
  /** The job queue, through which a run that pauses asks for a notification (absent in some unit tests). */
  jobs?: Jobs;
}

export const PLAN_CHANNEL = 'svc_workflow_events';
/** A claimed node with no run row after this long lost its conductor between the claim and the run. */
export const UNSTARTED_MS = 60_000;
/** A node run that ended this long ago without its node moving on had its runFinished delivery delayed. */
export const LATE_MS = 30_000;

export interface Applied<R> {
  state: WorkflowState;
  changes: Changes;
  result: R;
}

/** Runs `fn` on the locked run, saves what it changed with its events, then stops and starts the runs it asked for. */
export async function transition<R>(
  deps: EngineDeps,
  tenantId: string,
  id: string,
  fn: (t: Transition, tx: Tx) => R | Promise<R>,
): Promise<Applied<R>> {
  const applied = await withTenant(deps.db, tenantId, async (tx) => {
    const loaded = await loadWorkflowRun(tx, id, { forUpdate: true });
    if (!loaded) throw notFound(`unknown workflow run: ${id}`);
    const before = structuredClone(loaded.state);
    const t = new Transition(loaded.state, { now: new Date(), newRunId: () => prefixedId('run') });
    const result = await fn(t, tx);
    const seq = await saveTransition(tx, loaded, before, t.changes);
    if (deps.jobs && before.status !== RUN.paused && loaded.state.status === RUN.paused) await notifyPaused(deps.jobs, tx, tenantId, loaded.state);
    if (deps.jobs && before.status !== loaded.state.status) await reportEnd(deps.jobs, tx, tenantId, loaded.state);
    return { state: loaded.state, changes: t.changes, result, seq, moved: seq !== loaded.seq };
  });
  if (applied.moved) await deps.database.notify(PLAN_CHANNEL, JSON.stringify({ t: tenantId, w: id, s: applied.seq })).catch(() => {});
  await afterCommit(deps, tenantId, applied.state, applied.changes);
  return applied;
}

/** A run that pauses waits for a person (a repair): they hear of it, in the transaction that paused it. */
function notifyPaused(jobs: Jobs, tx: Tx, tenantId: string, state: WorkflowState): Promise<void> {
  const held = state.nodes.filter((n) => n.status === NODE.error && n.onError === 'pause');
  const name = state.name || state.id;
  const why = held.map((n) => `node ${n.id} (profile ${n.profile}) failed${n.error ? `: ${n.error}` : ''}`).join('; ') || 'a node failed';
  return requestNotification(jobs, tx, {
    tenantId,
    event: 'workflow.paused',
    subject: `svc: workflow ${name} paused`,
    message: `Workflow run ${name} (${state.id}) paused: ${why}. Repair it (POST /api/workflows/runs/${state.id}/repair) or cancel it.`,
    runId: held[0]?.runId ?? null,
  });
}

/** workflow.completed and workflow.failed for the webhook outbox, in the transaction that ended the run. */
async function reportEnd(jobs: Jobs, tx: Tx, tenantId: string, state: WorkflowState): Promise<void> {
  const type = state.status === RUN.completed ? 'workflow.completed' : state.status === RUN.failed ? 'workflow.failed' : undefined;
  if (!type) return;
  const failed = state.nodes.filter((n) => n.status === NODE.error).map((n) => ({ id: n.id, profile: n.profile, runId: n.runId, error: n.error ?? null }));
  await emitEvent(jobs, tx, {
    tenantId,
    type,
    key: `${type}:${state.id}`,
    data: { workflowRunId: state.id, name: state.name, definitionId: state.definitionId, startedAt: state.startedAt, finishedAt: state.finishedAt, nodes: state.nodes.length, ...(type === 'workflow.failed' ? { failedNodes: failed } : {}) },
  });
}

async function afterCommit(deps: EngineDeps, tenantId: string, state: WorkflowState, changes: Changes): Promise<void> {
  for (const runId of changes.cancelRuns) {
    await cancelRun(deps.runs, tenantId, runId).catch((err) => deps.log.warn('cancelling a workflow node run failed', { runId, error: describeError(err) }));
  }
  await Promise.all(changes.start.map((n) => startNode(deps, tenantId, state, n)));
}

/** Creates the claimed node's run; a refusal (402 out of credit, a profile gone, …) is the node's error. */
async function startNode(deps: EngineDeps, tenantId: string, state: WorkflowState, node: NodeState): Promise<void> {
  try {
    await createRun(deps.runs, tenantId, {
      id: node.runId!,
      profile: node.profile,
      prompt: renderPrompt(state, node),
      title: `workflow ${state.name || state.id}: ${node.id}`,
    }, { origin: WORKFLOW_ORIGIN, multitask: 'reject' }); // each node's run opens a session of its own: never busy
  } catch (err) {
    const message = err instanceof AppError ? err.message : describeError(err);
    if (!(err instanceof AppError)) deps.log.warn('workflow node run failed to start', { workflowRunId: state.id, nodeId: node.id, error: message });
    await transition(deps, tenantId, state.id, (t) => {
      const n = t.node(node.id);
      if (n?.status !== NODE.running || n.runId !== node.runId) return;
      t.nodeFailed(n, `its run could not start: ${message}`);
      t.settle();
    });
  }
}

/** The `workflows` runFinished subscriber: the node whose run ended is ok (with its final text) or error. Idempotent. */
/** The origin of a node's run: only such runs reach the `workflows` runFinished subscriber. */
export const WORKFLOW_ORIGIN = 'workflow';

export function onRunFinished(deps: EngineDeps, ev: Pick<RunFinished, 'tenantId' | 'runId' | 'status'>): Promise<void> {
  return nodeRunEnded(deps, ev.tenantId, ev.runId, ev.status);
}

async function nodeRunEnded(deps: EngineDeps, tenantId: string, runId: string, status: string): Promise<void> {
  const found = await withTenant(deps.db, tenantId, async (tx) => {
    const id = await workflowOfNodeRun(tx, tenantId, runId);
    if (!id) return undefined;
    if (status === 'ok') return { id, result: { ok: true as const, output: await finalText(tx, tenantId, runId) } };
    const why = await errorText(tx, tenantId, runId);
    return { id, result: { ok: false as const, error: `run ${status}${why ? `: ${why}` : ''}` } };
  });
  if (!found) return;
  await transition(deps, tenantId, found.id, (t) => t.nodeFinished(runId, found.result));
}

/**
 * The safety net every conductor runs every few seconds (the run row's lock makes replicas take turns):
 * - a node claimed but whose run never appeared after UNSTARTED_MS (its conductor died between the claim and the
 *   run) ends in error, handled per onError;
 * - a node still running whose run ended more than LATE_MS ago (its runFinished delivery is late: a conductor died
 *   while handling it, and the queue retries only after the job expires) is moved on as the hook would have.
 */
export async function sweep(deps: EngineDeps, now = new Date()): Promise<number> {
  const { unstarted, ended } = await withSystem(deps.db, async (tx) => ({
    unstarted: await findUnstarted(tx, new Date(now.getTime() - UNSTARTED_MS), 50),
    ended: await findEndedUnrecorded(tx, new Date(now.getTime() - LATE_MS), 50),
  }));
  for (const s of unstarted) {
    await transition(deps, s.tenantId, s.workflowRunId, async (t, tx) => {
      const n = t.state.nodes.find((x) => x.runId === s.runId);
      if (n?.status !== NODE.running || (await runExists(tx, s.runId))) return;
      t.nodeFailed(n, 'its run never started: the conductor that claimed it stopped first');
      t.settle();
    });
  }
  for (const e of ended) await nodeRunEnded(deps, e.tenantId, e.runId, e.status);
  return unstarted.length + ended.length;
}
