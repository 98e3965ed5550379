import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { withTenant } from '../../../db/index.ts';
import { runEvent, type RunEvent } from '../../../contracts/run-event.ts';
import type { RunOptions, SubTask } from '../../../contracts/runner.client.ts';
import type { Logger } from '../../../shared/log.ts';
import type { Metrics } from '../../../shared/metrics.ts';
import { runMetrics } from './run-metrics.ts';
import type { FleetMember } from '../runners/fleet.ts';
import type { RunHooks } from '../hooks/index.ts';
import { finishSessionRun, saveState } from '../sessions/sessions.repo.ts';
import type { ActiveRun, ActiveRuns } from './active-runs.ts';
import { isTerminalEvent } from './active-runs.ts';
import type { EventLog } from './event-log.ts';
import type { Hub } from './hub.ts';
import { appendEvents, finishRun } from './runs.repo.ts';

/**
 * Drives one run: reads the runner's NDJSON events, numbers them, appends them to the batched log and the live hub,
 * and guarantees exactly one terminal event. Then it writes the final status (never over `cancelled`), releases the
 * session and saves the session's state bundle so another runner can hydrate it later.
 */
export interface DriverDeps {
  db: Kysely<DB>;
  eventLog: EventLog;
  hub: Hub;
  active: ActiveRuns;
  log: Logger;
  metrics: Metrics;
  hooks: RunHooks;
}

/** Per-run extras that are never stored: the profile's resolved skills, a model override and extra MCP servers (/v1). */
export type RunExtras = Pick<RunOptions, 'model' | 'mcpServers' | 'skills'>;

export async function driveRun(deps: DriverDeps, run: ActiveRun, runner: FleetMember, subTask: SubTask, runToken?: string, extras: RunExtras = {}): Promise<void> {
  let seq = 0;
  const started = performance.now();
  const metrics = runMetrics(deps.metrics);
  const emit = (event: RunEvent) => {
    if (seq === 0) metrics.firstEvent((performance.now() - started) / 1000);
    if (event.usage) metrics.usage(event.usage);
    const stored = { seq: ++seq, event };
    run.events.push(stored);
    deps.eventLog.append(run.tenantId, run.runId, stored.seq, event);
    deps.hub.publish(run.tenantId, run.runId, stored);
  };
  let terminal: RunEvent | undefined;
  try {
    const events = await runner.client.run(run.tenantId, subTask, run.controller.signal, { ...extras, runToken });
    for await (const event of events) {
      if (event.type === 'session_init' && event.runtimeSessionId) run.runtimeSessionId = event.runtimeSessionId;
      if (isTerminalEvent(event)) {
        terminal = run.stopping ? stoppedEvent(run) : event;
        if (event.usage) metrics.usage(event.usage); // a runtime may report usage on its result
        break;
      }
      emit(event);
    }
  } catch (err) {
    terminal = run.stopping ? stoppedEvent(run) : runEvent('error', { message: `run failed: ${err instanceof Error ? err.message : String(err)}` });
  }
  terminal ??= run.stopping ? stoppedEvent(run) : runEvent('error', { message: 'run stream ended without a result' });
  const status = await finish(deps, run, terminal, seq + 1);
  metrics.finished(status, (performance.now() - started) / 1000);
  deps.active.remove(run.tenantId, run.runId);
  const saving = saveSessionState(deps, run, runner);
  deps.active.settle(saving); // a shutdown must not close the database under this write
  await saving;
}

/**
 * The end of a run lands atomically: the terminal event, the run status (never over `cancelled`), the runFinished
 * hook's job and the released session commit in one transaction, and only then is the terminal event published. A client that sees the terminal
 * event therefore always finds the final status and can start the next run on the session at once.
 */
async function finish(deps: DriverDeps, run: ActiveRun, terminal: RunEvent, seq: number): Promise<string> {
  await deps.eventLog.flush();
  const status = run.stopping ?? (terminal.type === 'result' ? 'ok' : 'error');
  try {
    await withTenant(deps.db, run.tenantId, async (tx) => {
      await appendEvents(tx, run.tenantId, [{ runId: run.runId, seq, event: terminal }]);
      if (await finishRun(tx, run.runId, status)) await deps.hooks.runFinished(tx, run.tenantId, run.runId);
      await finishSessionRun(tx, run.sessionId, status, run.runtimeSessionId);
    });
  } catch (err) {
    deps.log.error('recording the end of a run failed', { runId: run.runId, error: String(err) });
  }
  const stored = { seq, event: terminal };
  run.events.push(stored);
  deps.hub.publish(run.tenantId, run.runId, stored);
  await deps.hub.announce([{ tenantId: run.tenantId, runId: run.runId, seq }]).catch(() => {});
  return status;
}

function stoppedEvent(run: ActiveRun): RunEvent {
  return run.stopping === 'interrupted'
    ? runEvent('error', { message: 'run interrupted: the conductor driving it shut down' })
    : runEvent('error', { message: 'run cancelled' });
}

async function saveSessionState(deps: DriverDeps, run: ActiveRun, runner: FleetMember): Promise<void> {
  try {
    const bundle = await runner.client.exportState(run.tenantId, run.sessionId);
    if (!bundle) return;
    await withTenant(deps.db, run.tenantId, (tx) =>
      saveState(tx, { sessionId: run.sessionId, tenantId: run.tenantId, contentType: bundle.contentType, runtimeSessionId: bundle.runtimeSessionId, bundle: bundle.bytes }),
    );
  } catch (err) {
    deps.log.warn('saving the session state failed', { sessionId: run.sessionId, error: String(err) });
  }
}
