import { withTenant, withTenantStatement, type Tx } from '../../../db/index.ts';
import type { HeldDecision, ParkedResume } from '../../../contracts/approvals.ts';
import { runEvent, type RunEvent } from '../../../contracts/run-event.ts';
import type { SubTask } from '../../../contracts/runner.client.ts';
import { AppError, describeError } from '../../../shared/errors.ts';
import type { Jobs } from '../jobs/index.ts';
import { runKey } from '../provider-keys/index.ts';
import { finishSessionRun } from '../sessions/sessions.repo.ts';
import { placeSession } from '../sessions/sessions.service.ts';
import { resolveSkills } from '../skills/index.ts';
import type { ActiveRun } from './active-runs.ts';
import type { DriverDeps } from './driver.ts';
import type { Hub } from './hub.ts';
import { launchRun } from './launch.ts';
import { appendEvents, finishRun, getRunProfile, lastSeq } from './runs.repo.ts';
import { claimParked, lockApprovalStatus, lockParked, markParked, parkedWithApproval, unmarkParked } from './parking.repo.ts';
import type { RunDeps } from './runs.service.ts';

/**
 * Parking: a run whose tool call waits for a person's approval leaves every live resource, and the decision resumes
 * it from that call. The simplest design that survives any process dying while it waits:
 *
 * 1. The runner's gate (runner approvals/) records the pending approval here first (`park: true`: it may wait its
 *    whole timeout, SVC_APPROVAL_TIMEOUT_S or the profile's approvalTimeoutSeconds, default 24 h), shows
 *    `approval_required`, and answers the worker's toolkit call with a placeholder marked PARKED_MARK
 *    (contracts/approvals.ts). The `general` runtime ends its turn after that step, the call pending in its history
 *    (worker runtimes/general/turn.ts); the runner hides the placeholder result and ends the run's stream with
 *    `parked` instead of the turn's `result`, freeing its session (worker, session MCP token, a sandbox worker's
 *    event upload, wall-time counters all end with that run).
 * 2. The driver (driver.ts) reads `parked`: it saves the session's state bundle (the conversation with the pending
 *    call), then `parkRun` marks the run `parked_approval` (sql/0031). No terminal event is written, the run stays
 *    `running` (shown `waiting`), its session stays claimed (a parked run is its session's run in progress for
 *    `multitask`), its stream stays open with keep-alives (follow.ts), and no conductor drives it: the orphan sweep
 *    skips parked runs, so a conductor restart leaves it parked. Its run token is not renewed; a resume mints one.
 * 3. A decision (approvals.service.ts decide, or the expiry job: a denial, reason `expired`) settles the approval
 *    and, in the same transaction, queues RESUME_QUEUE for a parked run. A decision taken while the run is still
 *    parking is seen by `parkRun` (row locks, see there), which queues the resume then.
 * 4. `resumeParked` (the job, on whichever conductor takes it) places the session on a live runner (hydrating it from
 *    its bundle where its runner lost it), claims the run (owner: this conductor; `resumed_from`: the events the log
 *    holds, so an adopting conductor re-attaches right), and launches it again with the same run id, `resume`
 *    carrying the call and its decision. The runner shows `approval_decided`, runs the call (approved, with the edited
 *    input) or fails it (denied, with the reason), shows its `tool_result`, and the worker continues the model's turn
 *    from the pending call with that result. The log goes on after its last event and ends with exactly one terminal
 *    event, as for any run. The job is retried while no runner can take the session.
 * 5. Cancel (also `multitask: "interrupt"`) of a parked run ends it here (`endParked`): its terminal event, the
 *    session released, what it left pending cancelled (the run hooks).
 *
 * Only runs whose settings are all stored are parked (a profile's run, queued or not): a run carrying per-run extras
 * (the /v1 agents API's model and servers) could not be re-dispatched as it was, so its calls are held (runner
 * approvals/, at most APPROVAL_HOLD_MAX_S), as are runtime_a's and runtime_b's.
 */
export const RESUME_QUEUE = 'approvals.resume';
export interface ResumeJob {
  tenantId: string;
  runId: string;
  approvalId: string;
}

/** Queues the resume of a parked run, in the caller's transaction (the decision's, or the park's). */
export async function queueResume(jobs: Jobs, tx: Tx, job: ResumeJob): Promise<void> {
  await jobs.send<ResumeJob>(RESUME_QUEUE, job, { tx, singletonKey: `${job.tenantId}:${job.approvalId}` });
}

/**
 * The driver's part once the runner said `parked`: marks the run parked unless it ended meanwhile (a cancel), and
 * queues its resume at once when its approval was decided before the mark. False when the run is no longer running.
 */
export async function parkRun(deps: DriverDeps, run: ActiveRun, approvalId: string): Promise<boolean> {
  return withTenant(deps.db, run.tenantId, async (tx) => {
    // The run's row, then the approval's (the order a run's end takes them: its status, then what it left pending).
    // A decision locks the approval and then reads this mark: either it commits first and this sees it decided, or it
    // waits for this commit and then reads the mark. Either way exactly one of them queues the resume.
    if (!(await markParked(tx, run.runId, approvalId))) return false;
    const status = await lockApprovalStatus(tx, run.runId, approvalId);
    if (!status || status === 'cancelled') throw new Error(`approval ${approvalId} is ${status ?? 'unknown'}`);
    if (status !== 'pending') {
      if (!deps.jobs) throw new Error('this conductor cannot resume parked runs (no job queue)');
      await queueResume(deps.jobs, tx, { tenantId: run.tenantId, runId: run.runId, approvalId });
    }
    return true;
  });
}

/**
 * Ends a parked run that was cancelled (or interrupted), or can no longer resume (`error`): its terminal event, the
 * session released, and its queue's next run started. False when the run is not parked (a driver ends it then, or it
 * already ended).
 */
export async function endParked(deps: RunDeps & { hub: Hub }, tenantId: string, runId: string, terminal: RunEvent = runEvent('error', { message: 'run cancelled' }), status: 'cancelled' | 'error' = 'cancelled'): Promise<boolean> {
  const ended = await withTenant(deps.db, tenantId, async (tx) => {
    const row = await lockParked(tx, runId);
    if (!row) return undefined;
    await unmarkParked(tx, runId);
    const stored = { seq: (await lastSeq(tx, tenantId, runId)) + 1, event: terminal };
    await appendEvents(tx, tenantId, [{ runId, ...stored }]);
    // a cancel wrote `cancelled` (and ran the hooks) already; anything else ends it here
    if (await finishRun(tx, runId, status)) await deps.hooks.runFinished(tx, tenantId, runId);
    await finishSessionRun(tx, row.session_id, status, undefined);
    return { stored, sessionId: row.session_id };
  });
  if (!ended) return false;
  deps.hub.publish(tenantId, runId, ended.stored);
  deps.onSessionFree?.(tenantId, ended.sessionId);
  return true;
}

/** The resume job: the parked run goes on, on a live runner, from its pending call with its approval's decision. */
export async function resumeParked(deps: RunDeps & { hub: Hub }, job: ResumeJob): Promise<void> {
  const { tenantId, runId, approvalId } = job;
  const found = await withTenant(deps.db, tenantId, (tx) => parkedWithApproval(tx, runId, approvalId));
  if (!found || found.run.parked_approval !== approvalId) return; // resumed already, or ended
  const { run, approval } = found;
  if (run.status !== 'running' || approval.status === 'pending' || approval.status === 'cancelled') {
    if (run.status !== 'running') await endParked(deps, tenantId, runId);
    return;
  }
  const sessionId = run.session_id;
  // placed before the run is claimed: with no live runner the job fails, is retried, and the run stays parked
  let runner;
  try {
    runner = await placeSession(deps, tenantId, sessionId);
  } catch (err) {
    if (!(err instanceof AppError && err.status === 404)) throw err;
    // its session was shut down meanwhile: nothing can resume it
    await endParked(deps, tenantId, runId, runEvent('error', { message: `run failed: it could not resume after its approval: ${err.message}` }), 'error');
    return;
  }
  const found2 = await withTenantStatement(deps.db, tenantId, (tx) => getRunProfile(tx, run.profile, sessionId));
  if (!found2) throw new Error(`its profile ${run.profile} no longer exists`);
  const profile = found2.snapshot ?? found2.spec;
  const own = runKey(profile, found2.keys, (row) => deps.providerKeys.open(tenantId, row));
  const skills = await resolveSkills(deps.db, tenantId, found2.spec.skills);
  const from = await withTenant(deps.db, tenantId, async (tx) => {
    const seq = await lastSeq(tx, tenantId, runId);
    return (await claimParked(tx, runId, approvalId, deps.ownerId, seq)) ? seq : undefined;
  });
  if (from === undefined) return; // another conductor resumed it, or a cancel ended it
  const decision: HeldDecision =
    approval.status === 'approved'
      ? { decision: 'approve', ...(approval.message ? { message: approval.message } : {}), ...(approval.decided_input ? { input: approval.decided_input as Record<string, unknown> } : {}) }
      : { decision: 'deny', reason: approval.status === 'expired' ? 'expired' : 'denied', ...(approval.message ? { message: approval.message } : {}) };
  const resume: ParkedResume = { approvalId, ...(approval.tool_call_id ? { toolCallId: approval.tool_call_id } : {}), toolName: approval.tool_name, input: approval.input ?? {}, decision };
  const extras = { ...(own?.model ? { model: own.model } : {}), ...(skills.length ? { skills } : {}), parkable: true, resume };
  try {
    await launchRun(deps, { tenantId, runId, sessionId, runner, subTask: run.sub_task as unknown as SubTask, extras, from, resumed: true });
  } catch (err) {
    deps.log.warn('resuming a parked run failed', { runId, error: describeError(err) });
    const stored = await withTenant(deps.db, tenantId, async (tx) => {
      const e = { seq: (await lastSeq(tx, tenantId, runId)) + 1, event: runEvent('error', { message: `run failed: it could not resume after its approval: ${describeError(err)}` }) };
      await appendEvents(tx, tenantId, [{ runId, ...e }]);
      if (await finishRun(tx, runId, 'error')) await deps.hooks.runFinished(tx, tenantId, runId);
      await finishSessionRun(tx, sessionId, 'error', undefined);
      return e;
    });
    deps.hub.publish(tenantId, runId, stored);
  }
}
