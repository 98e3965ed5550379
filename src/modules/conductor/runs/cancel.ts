import { withTenant } from '../../../db/index.ts';
import { releaseCancelledSession } from '../sessions/sessions.repo.ts';
import { runEvent } from '../../../contracts/run-event.ts';
import { notFound } from '../../../shared/errors.ts';
import type { Hub } from './hub.ts';
import { appendEvents, eventsAfter, finishRun, getRun, lastSeq } from './runs.repo.ts';
import type { RunDeps } from './runs.service.ts';
import { cancelQueued } from './multitask.ts';
import { endParked } from './parking.ts';

/**
 * Stopping runs. Cooperative cancel writes `cancelled` and asks the driving conductor (this one or another replica,
 * through the hub) to abort; force-terminate also waits up to 2 s for the session claim to drain and releases it
 * itself when the driver does not. Every lookup is the caller's tenant's: another tenant's run is an unknown run.
 */
export interface ForceTerminateResult {
  runId: string;
  cancelled: boolean;
  sessionReleased: boolean;
  claimStolen: boolean;
  statusWritten: boolean;
  sessionId: string;
  warnings: string[];
}

export const DRAIN_MS = 2000;

export async function cancelRun(deps: RunDeps & { hub: Hub }, tenantId: string, runId: string): Promise<void> {
  const row = await withTenant(deps.db, tenantId, (tx) => getRun(tx, runId));
  if (!row) throw notFound(`unknown run: ${runId}`);
  if (row.status === 'queued' && (await cancelQueued(deps, tenantId, runId))) return; // it never starts
  if (row.status !== 'running') return; // idempotent: finished runs keep their status
  await withTenant(deps.db, tenantId, async (tx) => {
    if (await finishRun(tx, runId, 'cancelled')) await deps.hooks.runFinished(tx, tenantId, runId);
  });
  stopLocally(deps, tenantId, runId) || (await deps.hub.requestCancel(tenantId, runId));
  await endParked(deps, tenantId, runId); // a parked run has no driver to end it (parking.ts)
}

/** Aborts the tenant's run if this conductor drives it; false when it is not ours. */
export function stopLocally(deps: RunDeps, tenantId: string, runId: string, reason: 'cancelled' | 'interrupted' = 'cancelled'): boolean {
  const active = deps.active.get(tenantId, runId);
  if (!active) return false;
  active.stopping ??= reason;
  active.controller.abort();
  return true;
}

export async function terminateRun(deps: RunDeps & { hub: Hub }, tenantId: string, runId: string): Promise<ForceTerminateResult> {
  const result: ForceTerminateResult = { runId, cancelled: false, sessionReleased: false, claimStolen: false, statusWritten: false, sessionId: '', warnings: [] };
  const row = await withTenant(deps.db, tenantId, (tx) => getRun(tx, runId));
  const active = deps.active.get(tenantId, runId);
  if (!row && !active) {
    result.warnings.push('run_not_found');
    return result;
  }
  result.sessionId = row?.session_id ?? active!.sessionId;
  if (row?.status === 'queued' && (await cancelQueued(deps, tenantId, runId))) return { ...result, cancelled: true, statusWritten: true }; // it never started
  if (row && row.status !== 'running' && row.status !== 'cancelled') return result; // already finished
  result.cancelled = true;
  if (!stopLocally(deps, tenantId, runId)) await deps.hub.requestCancel(tenantId, runId).catch(() => result.warnings.push('force_release_failed'));
  if (row?.status === 'running' && (await endParked(deps, tenantId, runId, runEvent('error', { message: 'run cancelled (force-terminated)' })).catch(() => false))) {
    return { ...result, statusWritten: true, sessionReleased: true };
  }
  try {
    result.statusWritten = await withTenant(deps.db, tenantId, async (tx) => {
      if (!(await finishRun(tx, runId, 'cancelled'))) return (await getRun(tx, runId))?.status === 'cancelled';
      await deps.hooks.runFinished(tx, tenantId, runId);
      return true;
    });
  } catch {
    result.warnings.push('status_write_failed');
  }
  const drained = active ? await Promise.race([active.done.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), DRAIN_MS).unref())]) : false;
  if (drained) {
    result.sessionReleased = true;
    return result;
  }
  // The driver did not let go in time (or no replica drives the run): take the session claim and end the log.
  try {
    const forced = await withTenant(deps.db, tenantId, async (tx) => {
      result.claimStolen = await releaseCancelledSession(tx, result.sessionId);
      result.sessionReleased = true;
      const events = await eventsAfter(tx, runId, 0);
      if (events.some((e) => e.event.type === 'result' || e.event.type === 'error')) return undefined;
      const stored = { seq: (await lastSeq(tx, tenantId, runId)) + 1, event: runEvent('error', { message: 'run cancelled (force-terminated)' }) };
      await appendEvents(tx, tenantId, [{ runId, ...stored }]);
      return stored;
    });
    // other replicas hear of it from the insert's trigger; this one's subscribers get it here (a stuck driver of the
    // run here would never publish it, and the hub skips notifications of runs driven here)
    if (forced) deps.hub.publish(tenantId, runId, forced);
  } catch {
    result.warnings.push('force_release_failed');
  }
  return result;
}
