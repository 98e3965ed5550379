import type { Kysely } from 'kysely';
import { withTenant, type DB, type Tx } from '../../../db/index.ts';
import { AppError, describeError, notFound } from '../../../shared/errors.ts';
import { prefixedId } from '../../../shared/ids.ts';
import type { Logger } from '../../../shared/log.ts';
import type { Jobs } from '../jobs/index.ts';
import { emitEvent, requestNotification } from '../notifications/index.ts';
import type { RunFinished } from '../hooks/index.ts';
import { createRun, type RunDeps } from '../runs/runs.service.ts';
import { finishFiring, getAutomation, insertFiring, setFiringSession, updateAutomation, type AutomationRow, type Firing } from './automations.repo.ts';
import type { FiringOutcome } from '../../../db/types.ts';
import type { MemoryConfig } from '../../../config/config.ts';
import { readNote } from '../memory/index.ts';

/**
 * A firing is an ordinary run through the run service: the billing gate applies (out of credit disables the
 * automation), it is listed in /api/runs, charged and streamed. Its run id is chosen before the run exists, so the
 * firing row names it from the start and the runFinished hook always finds it.
 */
export interface FiringDeps {
  db: Kysely<DB>;
  /** The operator's memory ceilings (the note lives in a memory store). */
  memory: MemoryConfig;
  runs: RunDeps;
  log: Logger;
  /** The job queue, through which a disabled automation asks for a notification (absent in some unit tests). */
  jobs?: Jobs;
}

/** The memory note travels with every firing's prompt, so the agent keeps what it learnt. */
export function promptOf(prompt: string, note: string): string {
  if (!note) return prompt;
  return `${prompt}\n\n<automation-memory>\n${note}\n</automation-memory>`;
}

/** Run-now: one firing whatever the status; status and nextRunAt are left alone. */
export async function fireNow(deps: FiringDeps, tenantId: string, id: string): Promise<Firing> {
  const now = new Date();
  const { row, firing } = await withTenant(deps.db, tenantId, async (tx) => {
    const row = await getAutomation(tx, id, { forUpdate: true });
    if (!row || row.deletedAt) throw notFound(`unknown automation: ${id}`);
    const firing = await insertFiring(tx, { id: prefixedId('fir'), tenantId, automationId: id, scheduledFor: now, manual: true, outcome: null, runId: prefixedId('run'), sessionId: null });
    if (deps.jobs) await reportFired(deps.jobs, tx, row, firing!, true);
    return { row: await updateAutomation(tx, id, { last_fired_at: now }), firing: firing! };
  });
  return startFiring(deps, row, firing);
}

/** automation.fired for the webhook outbox, in the transaction that records the firing (run-now or the scheduler's slot). */
export function reportFired(jobs: Jobs, tx: Tx, a: Pick<AutomationRow, 'id' | 'name' | 'tenantId' | 'profile'>, firing: Firing, manual: boolean): Promise<unknown> {
  return emitEvent(jobs, tx, {
    tenantId: a.tenantId,
    type: 'automation.fired',
    key: `automation.fired:${firing.id}`,
    data: { automationId: a.id, name: a.name, profile: a.profile, firingId: firing.id, runId: firing.runId, scheduledFor: firing.scheduledFor, manual },
  });
}

/** The origin of a firing's run: only such runs reach the `automations` runFinished subscriber. */
export const AUTOMATION_ORIGIN = 'automation';

/** Starts the firing's run; a refusal (402 out of credit, 409 busy session, …) is the firing's failure, not the caller's. */
export async function startFiring(deps: FiringDeps, row: AutomationRow, firing: Firing): Promise<Firing> {
  const persistent = row.sessionMode === 'persistent';
  try {
    const note = await readNote({ db: deps.db, config: deps.memory }, row.tenantId, row.id);
    const { sessionId } = await createRun(deps.runs, row.tenantId, {
      id: firing.runId!,
      profile: row.profile,
      prompt: promptOf(row.prompt, note.body),
      title: `automation ${row.name}`,
      ...(persistent && row.sessionId ? { sessionId: row.sessionId } : {}),
    }, { origin: AUTOMATION_ORIGIN, multitask: 'reject' }); // a persistent session still busy with the last firing: this one fails, as it always did
    await withTenant(deps.db, row.tenantId, async (tx) => {
      await setFiringSession(tx, firing.id, sessionId);
      if (persistent && row.sessionId !== sessionId) await updateAutomation(tx, row.id, { session_id: sessionId });
    });
    return { ...firing, sessionId };
  } catch (err) {
    const outOfCredit = err instanceof AppError && err.status === 402;
    const message = err instanceof AppError ? err.message : describeError(err);
    if (!(err instanceof AppError)) deps.log.warn('automation firing failed to start', { automationId: row.id, error: message });
    return (await recordOutcome(deps, row.tenantId, { id: firing.id }, 'failed', message, outOfCredit)) ?? firing;
  }
}

/**
 * The outcome, once per firing (a redelivered hook finds it recorded and changes nothing). A success clears the
 * failure count; a failure counts, and `maxConsecutiveFailures` in a row (or running out of credit) disables it.
 */
export async function recordOutcome(
  deps: Pick<FiringDeps, 'db' | 'jobs'>,
  tenantId: string,
  where: { runId: string } | { id: string },
  outcome: Exclude<FiringOutcome, 'skipped'>,
  error: string | null,
  outOfCredit = false,
): Promise<Firing | undefined> {
  return withTenant(deps.db, tenantId, async (tx) => {
    const firing = await finishFiring(tx, where, outcome, error);
    if (!firing) return undefined;
    const a = await getAutomation(tx, firing.automationId, { forUpdate: true });
    if (!a) return firing;
    if (outcome === 'ok') {
      await updateAutomation(tx, a.id, { consecutive_failures: 0 });
      return firing;
    }
    if (deps.jobs) {
      await emitEvent(deps.jobs, tx, {
        tenantId,
        type: 'automation.failed',
        key: `automation.failed:${firing.id}`,
        data: { automationId: a.id, name: a.name, profile: a.profile, firingId: firing.id, runId: firing.runId, error },
      });
    }
    const failures = a.consecutiveFailures + 1;
    const disable = !a.deletedAt && (outOfCredit || failures >= a.maxConsecutiveFailures);
    await updateAutomation(tx, a.id, { consecutive_failures: failures, ...(disable ? { status: 'disabled' as const, next_run_at: null } : {}) });
    if (disable && a.status !== 'disabled' && deps.jobs) {
      const why = outOfCredit ? 'the tenant is out of credit' : `${failures} firings in a row failed`;
      await requestNotification(deps.jobs, tx, {
        tenantId,
        event: 'automation.disabled',
        subject: `svc: automation ${a.name} was disabled`,
        message: `Automation ${a.name} (${a.id}) of profile ${a.profile} was disabled: ${why}. The last error: ${error ?? 'none recorded'}. Start it again with POST /api/automations/${a.id}/start.`,
        runId: firing.runId,
      });
    }
    return firing;
  });
}

/** The `automations` runFinished subscriber: most runs are no firing, and find nothing to record. */
export function onRunFinished(deps: Pick<FiringDeps, 'db' | 'jobs'>, ev: RunFinished): Promise<unknown> {
  return ev.status === 'ok' ? recordOutcome(deps, ev.tenantId, { runId: ev.runId }, 'ok', null) : recordOutcome(deps, ev.tenantId, { runId: ev.runId }, 'failed', `run ended ${ev.status}`);
}
