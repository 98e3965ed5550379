import { endsRunnerStream, runEvent, type RunEvent } from '../../../contracts/run-event.ts';
import { AppError } from '../../../shared/errors.ts';
import type { Logger } from '../../../shared/log.ts';
import type { StartedRun } from './runs.service.ts';

/**
 * Adoptable runs. A run the conductor starts as adoptable outlives the connection that started it: the runner keeps
 * reading it and keeps its events (the last `maxEvents`), numbered from 1 exactly as the conductor numbers them in
 * its log. When the conductor driving it dies, another replica re-attaches after the last event its log holds and
 * drives the run to its end. With no reader attached for `graceMs` the run is cancelled (nobody adopted it); once it
 * ended, its tap stays `graceMs` for a late reader, then goes. An ended tap keeps only its events: the run itself (its
 * worker stream, generators and buffers) is let go at its end, since a conductor runs hundreds of runs a minute and
 * each tap outlives its run by `graceMs`.
 */
export interface Taps {
  /** Starts keeping `run`'s events under (tenant, runId). */
  open(tenant: string, runId: string, run: StartedRun): void;
  /** The run's events after id `after`, then live ones, ending after its terminal. 404 unknown run, 410 `after` evicted. */
  read(tenant: string, runId: string, after: number, signal: AbortSignal): AsyncIterable<RunEvent>;
  /** Cancels an adoptable run; false when the runner has no such run. */
  cancel(tenant: string, runId: string, reason: string): boolean;
  /** Runs kept right now (tests and diagnostics). */
  size(): number;
}

interface Tap {
  events: RunEvent[];
  /** Id of the event before `events[0]` (events evicted so far). */
  base: number;
  ended: boolean;
  readers: number;
  wake: Set<() => void>;
  timer: NodeJS.Timeout | undefined;
  runId: string;
  /** Until the run ended: what cancels it. */
  run: StartedRun | undefined;
}

export function createTaps(opts: { graceMs: number; maxEvents: number; log: Logger }): Taps {
  const taps = new Map<string, Tap>();
  const key = (tenant: string, runId: string) => `${tenant}\u0000${runId}`;

  function arm(k: string, tap: Tap): void {
    clearTimeout(tap.timer);
    tap.timer = setTimeout(() => {
      if (tap.ended) {
        if (taps.get(k) === tap) taps.delete(k);
        return;
      }
      if (tap.readers > 0) return;
      opts.log.warn('cancelling a run nobody re-attached to', { runId: tap.runId, graceMs: opts.graceMs });
      tap.run?.cancel(`its conductor went away and none re-attached within ${opts.graceMs} ms`);
    }, opts.graceMs);
    tap.timer.unref();
  }

  function push(tap: Tap, event: RunEvent): void {
    tap.events.push(event);
    if (tap.events.length > opts.maxEvents) {
      tap.events.shift();
      tap.base++;
    }
    for (const fn of tap.wake) fn();
    tap.wake.clear();
  }

  function get(tenant: string, runId: string): [string, Tap] {
    const k = key(tenant, runId);
    const tap = taps.get(k);
    if (!tap) throw new AppError(404, `unknown run: ${runId}`);
    return [k, tap];
  }

  return {
    open(tenant, runId, run) {
      const k = key(tenant, runId);
      const tap: Tap = { events: [], base: 0, ended: false, readers: 0, wake: new Set(), timer: undefined, runId, run };
      taps.set(k, tap);
      arm(k, tap); // until the first reader attaches
      void (async () => {
        let terminal = false;
        try {
          for await (const event of run.events) {
            push(tap, event);
            if (endsRunnerStream(event)) {
              terminal = true;
              break;
            }
          }
        } catch (err) {
          opts.log.warn('reading an adoptable run failed', { runId, error: String(err) });
        } finally {
          if (!terminal) push(tap, runEvent('error', { message: 'run stream ended without a result' }));
          tap.ended = true;
          tap.run = undefined;
          for (const fn of tap.wake) fn();
          tap.wake.clear();
          arm(k, tap);
        }
      })();
    },
    read(tenant, runId, after, signal) {
      const [k, tap] = get(tenant, runId);
      if (after < tap.base) throw new AppError(410, `events of run ${runId} after ${after} are no longer kept (the runner keeps its last ${opts.maxEvents})`);
      if (after > tap.base + tap.events.length) throw new AppError(400, `run ${runId} has no event ${after} yet`);
      return (async function* () {
        let next = after + 1;
        // counted once iteration starts: a stream cancelled before its first read never runs a `finally`
        tap.readers++;
        clearTimeout(tap.timer);
        // one abort listener for the reader's life (one per wait made adding a listener per event, O(n²) in a run)
        let wakeUp: (() => void) | undefined;
        const onAbort = () => wakeUp?.();
        signal.addEventListener('abort', onAbort, { once: true });
        try {
          for (;;) {
            if (next <= tap.base) {
              // this reader fell further behind than the runner keeps: it can never be complete, so end it (and the run)
              tap.run?.cancel('its reader fell behind');
              yield runEvent('error', { message: `run failed: its reader fell more than ${opts.maxEvents} events behind` });
              return;
            }
            while (next <= tap.base + tap.events.length) {
              const event = tap.events[next - 1 - tap.base]!;
              next++;
              yield event;
              if (endsRunnerStream(event)) return;
            }
            if (tap.ended || signal.aborted) return;
            await new Promise<void>((resolve) => {
              wakeUp = resolve;
              tap.wake.add(resolve);
            });
            wakeUp = undefined;
            if (signal.aborted) return;
          }
        } finally {
          signal.removeEventListener('abort', onAbort);
          tap.readers--;
          if (tap.readers === 0 || tap.ended) arm(k, tap);
        }
      })();
    },
    cancel(tenant, runId, reason) {
      const tap = taps.get(key(tenant, runId));
      if (!tap) return false;
      tap.run?.cancel(reason);
      return true;
    },
    size: () => taps.size,
  };
}
