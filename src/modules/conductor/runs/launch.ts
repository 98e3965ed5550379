import type { SubTask } from '../../../contracts/runner.client.ts';
import type { FleetMember } from '../runners/fleet.ts';
import { newActiveRun } from './active-runs.ts';
import { driveRun, type RunExtras } from './driver.ts';
import { runMetrics } from './run-metrics.ts';
import type { RunDeps } from './runs.service.ts';

/**
 * Starts driving a run whose row is `running` and whose session it holds: a run created at once (runs.service.ts) or a
 * queued run whose turn came (multitask.ts), or a parked run resumed (parking.ts). `from`: the events the log already
 * holds (a queued run's `queued` event, a resumed run's events so far).
 */
export async function launchRun(
  deps: RunDeps,
  r: { tenantId: string; runId: string; sessionId: string; runner: FleetMember; subTask: SubTask; extras?: RunExtras; from?: number; resumed?: boolean },
): Promise<void> {
  // memory holds only the run's own events: a reader from before them (a queued run's `queued` event) reads the log
  const run = newActiveRun(r.tenantId, r.runId, r.sessionId, r.from ?? 0);
  deps.active.add(run);
  if (!r.resumed) runMetrics(deps.metrics).started(); // a parked run resumed (parking.ts) started once
  const token = deps.mintRunToken ? await deps.mintRunToken(r.tenantId, r.runId) : undefined;
  run.done = driveRun(deps, run, r.runner, r.subTask, token, r.extras, r.from ?? 0).catch((err) => deps.log.error('run driver failed', { runId: r.runId, error: String(err) }));
}
