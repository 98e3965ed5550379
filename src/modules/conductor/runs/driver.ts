import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { commitWithNext, isUnstorable, sendWithNext, withTenant, withTenantStatement } from '../../../db/index.ts';
import { currentEvent, runEvent, type RunEvent } from '../../../contracts/run-event.ts';
import type { RunOptions, SubTask } from '../../../contracts/runner.client.ts';
import { describeError } from '../../../shared/errors.ts';
import type { Logger } from '../../../shared/log.ts';
import type { Metrics } from '../../../shared/metrics.ts';
import { retryWithBackoff } from '../../../shared/retry.ts';
import { contextWith, endSpan, runIn, SpanKind, startSpan } from '../../../shared/tracing/index.ts';
import { runMetrics } from './run-metrics.ts';
import type { FleetMember } from '../runners/fleet.ts';
import type { RunHooks } from '../hooks/index.ts';
import { finishSessionRun, saveState } from '../sessions/sessions.repo.ts';
import type { ActiveRun, ActiveRuns } from './active-runs.ts';
import { isTerminalEvent } from './active-runs.ts';
import type { EventLog, QueuedEvent } from './event-log.ts';
import type { Hub } from './hub.ts';
import { appendEvents, endRunning } from './runs.repo.ts';
import { endReasonOf, hasQueued } from './multitask.repo.ts';
import type { Jobs } from '../jobs/index.ts';
import { parkRun } from './parking.ts';

/**
 * Drives one run: reads the runner's NDJSON events, numbers them, appends them to the log and, once stored, the live hub,
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
  /** How long a run's end that cannot be written is retried (default 5 min); then the orphan sweep takes the run. */
  endRetryMs?: number;
  /**
   * Aborted once the database is gone for good (Database.lost: a throwaway cluster that died): a run's end is no
   * longer retried, and it reaches live readers unstored, naming the cause (no log remains for anyone to replay).
   */
  databaseLost?: AbortSignal;
  /**
   * Called once a run ended and its session is free (and its state saved): the session's queue starts its next run.
   * `queued`: whether runs wait on the session, as read after the run's end by the transaction saving its state.
   */
  onSessionFree?: (tenantId: string, sessionId: string, queued?: boolean) => void;
  /** The job queue: a run parked after its approval was decided queues its resume (parking.ts). */
  jobs?: Jobs;
}

/** Per-run extras that are never stored: the profile's resolved skills, a model override and extra MCP servers (/v1). */
export type RunExtras = Pick<RunOptions, 'model' | 'mcpServers' | 'skills' | 'env' | 'parkable' | 'resume'>;

/** `from`: how many events the log already holds before the run's own (1 for a queued run: its `queued` event). */
export async function driveRun(deps: DriverDeps, run: ActiveRun, runner: FleetMember, subTask: SubTask, runToken?: string, extras: RunExtras = {}, from = 0): Promise<void> {
  await traced('svc.conductor.run', run, runner, () =>
    drive(deps, run, runner, from, () => runner.client.run(run.tenantId, subTask, run.controller.signal, { ...extras, runToken, adoptable: true })),
  );
}

/**
 * The run's root span (one trace per run): the runner client's calls made under it carry its `traceparent`, so the
 * runner's, the worker's and the model's spans join it. Ends with the run's final status.
 */
async function traced(name: string, run: ActiveRun, runner: FleetMember, fn: () => Promise<string>): Promise<void> {
  const span = startSpan(name, {
    kind: SpanKind.CLIENT,
    attributes: { 'svc.run.id': run.runId, 'svc.session.id': run.sessionId, 'svc.tenant.id': run.tenantId, 'server.address': runner.client.baseUrl },
  });
  let status: string | undefined;
  try {
    status = await runIn(contextWith(span), fn);
  } finally {
    span.setAttribute('svc.run.status', status ?? 'error');
    endSpan(span, status === 'ok' || status === 'parked' ? undefined : `run ended ${status ?? 'with an exception'}`);
  }
}

/**
 * Adopts a run whose conductor died (ownership.ts): re-attaches to it on its runner after `stored`, the last event id
 * the log holds, and drives it to its end like any other. A runner that no longer has the run (it restarted, or nobody
 * re-attached within its grace) ends the run `interrupted`.
 */
export async function adoptRun(deps: DriverDeps, run: ActiveRun, runner: FleetMember, stored: number, offset = 0): Promise<void> {
  // `offset`: events the log holds before the runner's own (a queued run's `queued` event); the runner counts from 1
  await traced('svc.conductor.adopt', run, runner, () =>
    drive(deps, run, runner, stored, () => runner.client.attach(run.tenantId, run.runId, stored - offset, run.controller.signal), (err) => ({
      terminal: runEvent('error', { message: `run interrupted: the conductor driving it stopped, and its runner no longer has it (${err instanceof Error ? err.message : String(err)})` }),
      status: 'interrupted',
    })),
  );
}

type Ending = { terminal: RunEvent; status: 'interrupted' };

async function drive(
  deps: DriverDeps,
  run: ActiveRun,
  runner: FleetMember,
  from: number,
  open: () => Promise<AsyncIterable<RunEvent>>,
  unopened?: (err: unknown) => Ending,
): Promise<string> {
  let seq = from;
  /** The highest seq in the log: the terminal event goes right after it, so the log never has a gap. */
  let stored = from;
  let logFailure: string | undefined;
  /** Settles once the latest event is stored and published (appends settle in order, so all before it are too). */
  let published: Promise<void> = Promise.resolve();
  const started = performance.now();
  const metrics = runMetrics(deps.metrics);
  // The runner keeps an adoptable run going when its reader hangs up: stopping it (cancel, shutdown, a log that
  // cannot be written) is said explicitly.
  run.controller.signal.addEventListener('abort', () => void runner.client.cancelRun(run.tenantId, run.runId).catch(() => {}), { once: true });
  // An event reaches subscribers (and the in-memory replay) only once the log holds it: an id a client saw is an id
  // a resuming client finds, whatever dies next. Appends settle in order, so events are published in order.
  const emit = (event: RunEvent) => {
    if (seq === from) metrics.firstEvent((performance.now() - started) / 1000);
    if (event.usage) metrics.usage(event.usage);
    const e = { seq: ++seq, event };
    published = deps.eventLog.append(run.tenantId, run.runId, e.seq, event).then(
      () => {
        stored = e.seq;
        run.events.push(e);
        deps.hub.publish(run.tenantId, run.runId, e);
      },
      (err: unknown) => {
        if (logFailure !== undefined) return;
        logFailure = err instanceof Error ? err.message : String(err);
        run.controller.abort(); // the rest of the run could not be stored either
      },
    );
  };
  let terminal: RunEvent | undefined;
  let status: Ending['status'] | undefined;
  let events: AsyncIterable<RunEvent> | undefined;
  /** The runner parked the run (its call waits for approval): it is not over (parking.ts). */
  let parked: RunEvent | undefined;
  try {
    events = await open();
  } catch (err) {
    if (unopened && !run.stopping) ({ terminal, status } = unopened(err));
    else terminal = run.stopping ? stoppedEvent(run) : runEvent('error', { message: `run failed: ${err instanceof Error ? err.message : String(err)}` });
  }
  try {
    if (events) {
      for await (const received of events) {
        const event = currentEvent(received); // a runner of an older version may still send an old name
        if (event.type === 'session_init' && event.runtimeSessionId) run.runtimeSessionId = event.runtimeSessionId;
        if (event.type === 'parked') {
          parked = event;
          break;
        }
        if (isTerminalEvent(event)) {
          terminal = run.stopping ? stoppedEvent(run) : event;
          if (event.usage) metrics.usage(event.usage); // a runtime may report usage on its result
          break;
        }
        emit(event);
      }
    }
  } catch (err) {
    terminal = run.stopping ? stoppedEvent(run) : runEvent('error', { message: `run failed: ${err instanceof Error ? err.message : String(err)}` });
  }
  if (parked && !terminal) {
    await published;
    if (!run.stopping && logFailure === undefined && parked.approvalId) {
      // the conversation with the pending call is what a resume starts from: saved before the run counts as parked
      await saveSessionState(deps, run, runner);
      deps.eventLog.forget(run.tenantId, run.runId); // this driver appends nothing more to it
      if (await parkRun(deps, run, parked.approvalId).catch((err: unknown) => (deps.log.warn('parking a run failed', { runId: run.runId, error: String(err) }), false))) {
        // a decision already taken may resume the run at once, on this conductor too: only this driver's entry goes
        if (deps.active.get(run.tenantId, run.runId) === run) deps.active.remove(run.tenantId, run.runId);
        return 'parked';
      }
    }
    // cancelled while it parked (or it could not be parked): it ends here
    terminal = run.stopping ? stoppedEvent(run) : runEvent('error', { message: 'run cancelled while it parked to wait for approval' });
  }
  terminal ??= run.stopping ? stoppedEvent(run) : runEvent('error', { message: 'run stream ended without a result' });
  // the events not being written yet go with the run's end, in its transaction; those being written land first
  const queued = deps.eventLog.takeQueued(run.tenantId, run.runId);
  await queued.before;
  let tail = queued.events;
  if (logFailure !== undefined) {
    // nothing may land after the gap: the run ends right after its last stored event
    for (const p of tail) p.reject(new Error('an earlier event of this run could not be stored'));
    await published;
    tail = [];
  }
  deps.eventLog.forget(run.tenantId, run.runId);
  if (run.stopping === 'cancelled') terminal = await withReason(deps, run, terminal);
  if (logFailure !== undefined && !run.stopping) terminal = runEvent('error', { message: `run failed: its events could not be stored: ${logFailure}` });
  const final = await finish(deps, run, terminal, (tail.at(-1)?.seq ?? stored) + 1, status, { events: tail, published: () => published });
  metrics.finished(final, (performance.now() - started) / 1000);
  deps.active.remove(run.tenantId, run.runId);
  if (deps.databaseLost?.aborted) return final; // no database left to save the session's state in
  const saving = saveSessionState(deps, run, runner);
  deps.active.settle(saving); // a shutdown must not close the database under this write
  deps.onSessionFree?.(run.tenantId, run.sessionId, await saving);
  return final;
}

/** A cancelled run's terminal event says why when its row does (`interrupted`: a run posted with `multitask: "interrupt"`). */
async function withReason(deps: DriverDeps, run: ActiveRun, terminal: RunEvent): Promise<RunEvent> {
  const reason = await withTenantStatement(deps.db, run.tenantId, (tx) => endReasonOf(tx, run.runId)).catch(() => null);
  if (reason !== 'interrupted') return terminal;
  return { ...terminal, message: 'run cancelled: interrupted by a newer run on its session', reason };
}

/**
 * The end of a run lands atomically: the run's last events (`tail`: those the log had not begun to write), the terminal
 * event, the run status (never over `cancelled`), the runFinished hook's job and the released session commit in one
 * transaction, and only then are they published, in order. A client that sees the terminal event therefore always
 * finds the final status and can start the next run on the session at once. A transaction that fails is retried with
 * backoff; if it never lands, nothing is published (a terminal the log does not hold would differ from what a resuming
 * client reads) and the run is left `running` for the orphan sweep, which ends it once this conductor's lease lapses.
 * Unless the database is lost for good (`databaseLost`): no log or sweep remains then, and a terminal event naming the
 * cause is published unstored. Events the database refuses for what they hold end the run as the log would have: with
 * an error right after the last event stored.
 */
async function finish(
  deps: DriverDeps,
  run: ActiveRun,
  terminal: RunEvent,
  seq: number,
  given: Ending['status'] | undefined,
  tail: { events: QueuedEvent[]; published: () => Promise<void> },
): Promise<string> {
  const statusOf = (t: RunEvent) => run.stopping ?? given ?? (t.type === 'result' ? 'ok' : 'error');
  const retrying = (fn: () => Promise<void>) =>
    retryWithBackoff(fn, {
      giveUpMs: deps.endRetryMs ?? 300_000,
      signal: deps.databaseLost,
      retryIf: (err) => !isUnstorable(err),
      onRetry: (err, attempt) => deps.log.warn('recording the end of a run failed; retrying', { runId: run.runId, attempt, error: String(err) }),
    });
  const rowsOf = (events: readonly QueuedEvent[]) => events.map((p) => ({ runId: run.runId, seq: p.seq, event: p.event }));
  const write = (t: RunEvent, events: readonly QueuedEvent[]) =>
    retrying(() =>
      withTenant(deps.db, run.tenantId, async (tx) => {
        const status = statusOf(t);
        await sendWithNext(tx); // the last events and the terminal one go in one write with the run's status
        await appendEvents(tx, run.tenantId, [...rowsOf(events), { runId: run.runId, seq, event: t }]);
        const ahead = await deps.hooks.readAhead(tx, run.tenantId, 'end'); // so do the end's listeners' reads
        const facts = await endRunning(tx, run.tenantId, run.runId, status); // and it answers the hook's facts
        if (facts) await deps.hooks.runFinished(tx, run.tenantId, run.runId, { facts, ahead });
        await commitWithNext(tx); // the session's release is the last statement: the commit goes with it
        await finishSessionRun(tx, run.sessionId, status, run.runtimeSessionId);
      }),
    );
  /** The tail's events not stored (yet). */
  let pending = tail.events;
  const landed = () => {
    for (const p of pending) p.resolve(); // published in order, by the driver, before the terminal event
    pending = [];
  };
  const refused = (err: unknown) => {
    for (const p of pending) p.reject(err instanceof Error ? err : new Error(String(err)));
    pending = [];
  };
  try {
    try {
      await write(terminal, pending);
      landed();
    } catch (err) {
      if (!isUnstorable(err)) throw err;
      if (pending.length > 0) {
        // the database refuses what the last events or the terminal one hold: the events alone first, as the log would
        try {
          await retrying(() => withTenantStatement(deps.db, run.tenantId, (tx) => appendEvents(tx, run.tenantId, rowsOf(pending))));
          landed();
        } catch (err) {
          if (!isUnstorable(err)) throw err;
          seq = pending[0].seq; // the run ends right after its last stored event
          refused(err);
          if (!run.stopping) terminal = runEvent('error', { message: `run failed: its events could not be stored: ${err instanceof Error ? err.message : String(err)}` });
        }
      }
      try {
        await write(terminal, []);
      } catch (err) {
        if (!isUnstorable(err)) throw err;
        // the database refuses what the terminal event holds (no retry can change that): the run still ends, saying so
        terminal = runEvent('error', { message: `run failed: its final event could not be stored: ${err instanceof Error ? err.message : String(err)}` });
        await write(terminal, []);
      }
    }
  } catch (err) {
    if (pending.length > 0) seq = pending[0].seq;
    refused(err);
    await tail.published();
    if (deps.databaseLost?.aborted) {
      // The log died with the database and the server is stopping: readers get one terminal event naming why.
      const lost = { seq, event: runEvent('error', { message: `run interrupted: ${describeError(deps.databaseLost.reason)}` }) };
      run.events.push(lost);
      deps.hub.publish(run.tenantId, run.runId, lost);
      return 'interrupted';
    }
    deps.log.error('recording the end of a run failed; leaving it to the orphan sweep', { runId: run.runId, error: String(err) });
    return statusOf(terminal);
  }
  await tail.published();
  const status = statusOf(terminal);
  const stored = { seq, event: terminal };
  run.events.push(stored);
  deps.hub.publish(run.tenantId, run.runId, stored);
  return status;
}

function stoppedEvent(run: ActiveRun): RunEvent {
  return run.stopping === 'interrupted'
    ? runEvent('error', { message: 'run interrupted: the conductor driving it shut down' })
    : runEvent('error', { message: 'run cancelled' });
}

/**
 * Saves the session's state bundle and, in the same write, asks whether runs wait on the session (what its queue would
 * ask next, read after the save as it would be then): undefined when that was not read (no state, or it failed).
 */
async function saveSessionState(deps: DriverDeps, run: ActiveRun, runner: FleetMember): Promise<boolean | undefined> {
  try {
    const bundle = await runner.client.exportState(run.tenantId, run.sessionId);
    if (!bundle) return undefined;
    return await withTenant(deps.db, run.tenantId, async (tx) => {
      await sendWithNext(tx);
      await saveState(tx, { sessionId: run.sessionId, tenantId: run.tenantId, contentType: bundle.contentType, runtimeSessionId: bundle.runtimeSessionId, bundle: bundle.bytes });
      await commitWithNext(tx);
      return hasQueued(tx, run.sessionId);
    });
  } catch (err) {
    deps.log.warn('saving the session state failed', { sessionId: run.sessionId, error: String(err) });
    return undefined;
  }
}
