import { withSystem, withTenant, withTenantStatement, type Tx } from '../../../db/index.ts';
import { runEvent, type RunEvent } from '../../../contracts/run-event.ts';
import type { SubTask } from '../../../contracts/runner.client.ts';
import { AppError, describeError } from '../../../shared/errors.ts';
import type { Multitask } from './multitask-strategies.ts';
import { runKey } from '../provider-keys/index.ts';
import { resolveSkills } from '../skills/index.ts';
import { placeSession } from '../sessions/sessions.service.ts';
import { finishSessionRun, markSessionRunning } from '../sessions/sessions.repo.ts';
import type { Hub, StoredEvent } from './hub.ts';
import type { FleetMember } from '../runners/fleet.ts';
import { launchRun } from './launch.ts';
import { endParked } from './parking.ts';
import { cancelRunningRow, endQueuedRow, lockQueued, countQueued, hasQueued, idleQueues, lockSession, nextQueued, runningOn, startQueuedRow } from './multitask.repo.ts';
import { appendEvents, finishRun, getRunProfile, lastSeq } from './runs.repo.ts';
import type { RunDeps } from './runs.service.ts';

/**
 * Busy sessions: what a run posted to a session that has one in progress does (`multitask`). `reject` (the default)
 * answers 409 as before; `enqueue` records the run `queued`, its stream opening with a `queued` event, and starts it
 * once the runs before it ended, in the order they were posted (at most QUEUE_CAP wait per session: 429 beyond);
 * `interrupt` ends the run in progress `cancelled` with reason `interrupted` and starts the new one next, on the same
 * conversation. A queued run is only a row: whichever conductor frees the session starts the next one, and the
 * orphan sweep starts the queues whose session freed while no conductor was up (ownership.ts).
 */
export { MULTITASK, parseMultitask, type Multitask } from './multitask-strategies.ts';
export const QUEUE_CAP = 10;

type QueueDeps = RunDeps & { hub: Hub };

/**
 * In the transaction that records a run posted to a busy session: locks the session (so the run ending meanwhile
 * waits for this commit and then finds the queued run), holds the queue to its cap and answers its position (1: next).
 * `free`: the session's run ended before the lock, so no run's end will start the queue: the caller starts it after
 * its commit.
 */
export async function admitToQueue(tx: Tx, sessionId: string, strategy: Exclude<Multitask, 'reject'>): Promise<{ position: number; free: boolean }> {
  const status = await lockSession(tx, sessionId);
  const waiting = await countQueued(tx, sessionId);
  if (waiting >= QUEUE_CAP) throw new AppError(429, `session queue full: ${waiting} runs already wait on session ${sessionId} (at most ${QUEUE_CAP}); retry once one has started`, { code: 'queue_full' });
  return { position: strategy === 'interrupt' ? 1 : waiting + 1, free: status !== 'running' };
}

/** The stream's first event of a queued run. */
export function queuedEvent(sessionId: string, position: number, strategy: Exclude<Multitask, 'reject'>): RunEvent {
  const why = strategy === 'interrupt' ? 'it starts once the run it interrupts has stopped' : `position ${position} in the queue`;
  return runEvent('queued', { message: `queued on busy session ${sessionId}: ${why}`, position });
}

/** After an `interrupt` run is queued: the session's run in progress ends `cancelled`, reason `interrupted`. */
export async function interruptCurrent(deps: QueueDeps, tenantId: string, sessionId: string): Promise<void> {
  const current = await withTenant(deps.db, tenantId, async (tx) => {
    const runId = await runningOn(tx, sessionId);
    if (!runId || !(await cancelRunningRow(tx, runId, 'interrupted'))) return undefined;
    await deps.hooks.runFinished(tx, tenantId, runId);
    return runId;
  });
  if (!current) return;
  // its driver (here, or on another replica through the hub) ends its stream, frees the session and starts the queue
  const active = deps.active.get(tenantId, current);
  if (active) {
    active.stopping ??= 'cancelled';
    active.controller.abort();
  } else await deps.hub.requestCancel(tenantId, current);
  // a parked run has no driver: it ends here, and its session's queue starts the new run (parking.ts)
  await endParked(deps, tenantId, current, { ...runEvent('error', { message: 'run cancelled: interrupted by a newer run on its session' }), reason: 'interrupted' });
}

/**
 * Starts the session's next queued run if the session is free. Called when a run on it ended (driver.ts: `queued` as it
 * read it after the run's end), after a run was queued, and by the sweep. Safe to call from several conductors at once: the session row is locked while the
 * run is claimed, and only one of them can move the session to `running`.
 */
export async function startNextQueued(deps: QueueDeps, tenantId: string, sessionId: string, queued?: boolean): Promise<void> {
  if (deps.queuePaused?.()) return; // a conductor that is shutting down leaves the queue to the next one
  // The session is held on a runner before its next run is claimed: with no live runner yet (a conductor booting
  // before its runners answer) the run stays queued, and a later sweep starts it. `queued`: the caller read it already.
  if (!(queued ?? (await withTenantStatement(deps.db, tenantId, (tx) => hasQueued(tx, sessionId))))) return; // the common case: no queue
  let runner: FleetMember | undefined;
  try {
    runner = await placeSession(deps, tenantId, sessionId);
  } catch (err) {
    if (!(err instanceof AppError) || (err.status !== 503 && err.status !== 404)) throw err;
    if (err.status === 503) {
      deps.log.info('a queued run waits for a live runner', { sessionId, error: err.message });
      return;
    }
    // 404: the session was shut down; its queue ends below
  }
  const ended: Array<StoredEvent & { runId: string }> = [];
  const next = await withTenant(deps.db, tenantId, async (tx) => {
    const status = await lockSession(tx, sessionId);
    if (status === undefined || status === 'running') return undefined;
    const row = await nextQueued(tx, sessionId);
    if (!row) return undefined;
    if (status === 'shutdown' || !runner) {
      // nothing can run on it any more: each queued run ends with an error saying so
      for (let r: typeof row | undefined = row; r; r = await nextQueued(tx, sessionId)) {
        ended.push(await endQueued(deps, tx, tenantId, r.id, 'error', `run not started: session ${sessionId} was shut down`));
      }
      return undefined;
    }
    if (!(await markSessionRunning(tx, sessionId, String(row.sub_task.prompt ?? '')))) return undefined;
    if (!(await startQueuedRow(tx, row.id, deps.ownerId))) throw new Error(`queued run ${row.id} left the queue under its lock`);
    return row;
  });
  for (const e of ended) deps.hub.publish(tenantId, e.runId, e);
  if (!next) return;
  try {
    const found = await withTenantStatement(deps.db, tenantId, (tx) => getRunProfile(tx, next.profile, sessionId));
    if (!found) throw new Error(`its profile ${next.profile} no longer exists`);
    const runs = found.snapshot ?? found.spec;
    const own = runKey(runs, found.keys, (row) => deps.providerKeys.open(tenantId, row));
    const skills = await resolveSkills(deps.db, tenantId, found.spec.skills);
    const extras = { ...(own?.model ? { model: own.model } : {}), ...(skills.length ? { skills } : {}), parkable: true };
    // the log already holds the `queued` event: the run's own events follow it
    await launchRun(deps, { tenantId, runId: next.id, sessionId, runner: runner!, subTask: next.sub_task as unknown as SubTask, extras, from: 1 });
  } catch (err) {
    deps.log.warn('starting a queued run failed', { runId: next.id, sessionId, error: describeError(err) });
    await failStart(deps, tenantId, next.id, sessionId, `run failed: it could not start: ${describeError(err)}`);
    await startNextQueued(deps, tenantId, sessionId);
  }
}

/** Starts every queue whose session is free (system scope): the sweep's part, after a restart or a lost conductor. */
export async function startIdleQueues(deps: QueueDeps): Promise<number> {
  const queues = await withSystem(deps.db, (tx) => idleQueues(tx));
  for (const q of queues) await startNextQueued(deps, q.tenant_id, q.session_id).catch((err) => deps.log.warn('starting a session queue failed', { sessionId: q.session_id, error: describeError(err) }));
  return queues.length;
}

/** DELETE of a queued run: it never starts; its stream ends with one terminal event. False when it is not queued. */
export async function cancelQueued(deps: QueueDeps, tenantId: string, runId: string): Promise<boolean> {
  const ended = await withTenant(deps.db, tenantId, async (tx) => {
    return (await lockQueued(tx, runId)) ? endQueued(deps, tx, tenantId, runId, 'cancelled', 'run cancelled') : undefined;
  });
  if (ended) deps.hub.publish(tenantId, runId, ended);
  return ended !== undefined;
}

async function endQueued(deps: QueueDeps, tx: Tx, tenantId: string, runId: string, status: 'cancelled' | 'error', message: string): Promise<StoredEvent & { runId: string }> {
  await endQueuedRow(tx, runId, status);
  const stored = { runId, seq: (await lastSeq(tx, tenantId, runId)) + 1, event: runEvent('error', { message }) };
  await appendEvents(tx, tenantId, [stored]);
  await deps.hooks.runFinished(tx, tenantId, runId);
  return stored;
}

/** A claimed queued run that could not start: it ends `error` and frees the session, in one transaction. */
async function failStart(deps: QueueDeps, tenantId: string, runId: string, sessionId: string, message: string): Promise<void> {
  const stored = await withTenant(deps.db, tenantId, async (tx) => {
    const e = { runId, seq: (await lastSeq(tx, tenantId, runId)) + 1, event: runEvent('error', { message }) };
    await appendEvents(tx, tenantId, [e]);
    if (await finishRun(tx, runId, 'error')) await deps.hooks.runFinished(tx, tenantId, runId);
    await finishSessionRun(tx, sessionId, 'error', undefined);
    return e;
  });
  deps.hub.publish(tenantId, runId, stored);
}
