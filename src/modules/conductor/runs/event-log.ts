import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { isUnstorable, withTenantStatement } from '../../../db/index.ts';
import type { RunEvent } from '../../../contracts/run-event.ts';
import type { Logger } from '../../../shared/log.ts';
import { retryWithBackoff } from '../../../shared/retry.ts';
import type { Hub } from './hub.ts';
import { runKey } from './active-runs.ts';
import { appendEvents } from './runs.repo.ts';

/**
 * The durable event log, written as a group commit: when no write is in flight, what is queued goes at once (the
 * first events of a run reach the log, and so its clients, without waiting for a timer); while a write is in flight,
 * events queue and the next write takes all of them (up to `maxBatch`) in one multi-row INSERT per tenant. Every
 * `append` settles once its event is stored, so the driver publishes only what the log holds: an id a client saw is an
 * id in the log, even if this process dies the next instant. When a run ends, its events still queued (none of them
 * being written) leave the queue for the run's end (`takeQueued`, driver.ts): they are written in one statement with
 * its terminal event, in the transaction that ends the run.
 *
 * A write that fails is retried with backoff, never dropped (a gap would make a resuming client skip events). Only
 * after `giveUpMs` of failures are its events rejected; the run is then marked failed, its later events are refused
 * too (nothing may land after the gap), and the driver ends it with one error right after its last stored event.
 * Each tenant's statement settles on its own, and events the database refuses for what they hold fail only their own
 * run, at once: a batch shared with other runs (of any tenant) never fails them with it.
 */
export interface EventLog {
  /** Settles once the event is in the log; rejects if it never can be (the run must then end). */
  append(tenantId: string, runId: string, seq: number, event: RunEvent): Promise<void>;
  /** Settles once everything appended so far is stored or refused. */
  flush(): Promise<void>;
  /**
   * The run's events still queued (none of them being written yet) leave the queue: the caller writes them with the
   * run's end and settles each (`resolve` once stored, `reject` if never). `before` settles once the run's events being
   * written now are stored or refused.
   */
  takeQueued(tenantId: string, runId: string): { events: QueuedEvent[]; before: Promise<void> };
  /** The run has ended and its events have settled: drop its failed mark, if any. */
  forget(tenantId: string, runId: string): void;
  close(): Promise<void>;
}

/** An appended event not yet written (EventLog.takeQueued). */
export interface QueuedEvent {
  seq: number;
  event: RunEvent;
  resolve(): void;
  reject(err: Error): void;
}

interface Pending extends QueuedEvent {
  tenantId: string;
  runId: string;
  done: Promise<void>;
}

export interface EventLogOptions {
  db: Kysely<DB>;
  hub: Hub;
  log: Logger;
  maxBatch?: number;
  /** How long a failing write is retried before its runs are given up (default 30 s). */
  giveUpMs?: number;
  /** Aborted once the database is gone for good (Database.lost): a failing write is then given up at once. */
  databaseLost?: AbortSignal;
}

export function createEventLog(deps: EventLogOptions): EventLog {
  const maxBatch = deps.maxBatch ?? 500;
  const giveUpMs = deps.giveUpMs ?? 30_000;
  let queue: Pending[] = [];
  let writing = false;
  /** The batch being written now. */
  let inFlight: Pending[] = [];
  let last: Promise<void> = Promise.resolve();
  /** Runs whose events could not be stored: nothing more of theirs is written, until the driver forgets them. */
  const failed = new Set<string>();

  /** One statement per tenant, as before; what it stores is settled at once, whatever happens to the next tenant. */
  async function store(tenantId: string, rows: Pending[]): Promise<void> {
    await withTenantStatement(deps.db, tenantId, (tx) => appendEvents(tx, tenantId, rows)); // one round trip
    for (const p of rows) p.resolve();
  }

  function giveUp(rows: Pending[], err: unknown): void {
    for (const p of rows) failed.add(runKey(p.tenantId, p.runId));
    for (const p of rows) p.reject(err instanceof Error ? err : new Error(String(err)));
  }

  /**
   * A statement the database refused for its data (storable.ts isUnstorable) is refused again whenever it is sent, and
   * it would take every run in it down: the tenant's runs are then written one statement each, and only a run whose own
   * events are refused fails, at once (no retry can help it). `rows` keeps what is still to write, should a later
   * statement fail for another reason and the batch be retried.
   */
  async function isolate(tenantId: string, rows: Pending[], refusal: unknown): Promise<void> {
    const byRun = Map.groupBy(rows, (p) => p.runId);
    for (const [runId, own] of byRun) {
      try {
        if (byRun.size === 1) throw refusal; // it was this run's statement already
        await store(tenantId, own);
      } catch (err) {
        if (!isUnstorable(err)) throw err;
        deps.log.error('run events refused by the database; failing their run', { tenantId, runId, events: own.length, error: String(err) });
        giveUp(own, err);
      }
      rows.splice(0, rows.length, ...rows.filter((p) => p.runId !== runId));
    }
  }

  async function land(batch: Pending[]): Promise<void> {
    const live = batch.filter((p) => {
      if (!failed.has(runKey(p.tenantId, p.runId))) return true;
      p.reject(new Error('an earlier event of this run could not be stored'));
      return false;
    });
    if (live.length === 0) return;
    /** What is not stored yet, by tenant: a retry sends only that. */
    const waiting = Map.groupBy(live, (p) => p.tenantId);
    try {
      await retryWithBackoff(
        async () => {
          for (const [tenantId, rows] of waiting) {
            try {
              await store(tenantId, rows);
            } catch (err) {
              if (!isUnstorable(err)) throw err;
              await isolate(tenantId, rows, err);
            }
            waiting.delete(tenantId);
          }
        },
        {
          giveUpMs,
          signal: deps.databaseLost,
          onRetry: (err, attempt) => deps.log.warn('writing run events failed; retrying', { error: String(err), events: [...waiting.values()].flat().length, attempt }),
        },
      );
    } catch (err) {
      const rows = [...waiting.values()].flat();
      deps.log.error('writing run events failed; giving up on their runs', { error: String(err), events: rows.length });
      giveUp(rows, err);
    }
    // other replicas hear of them from the insert's trigger (NOTIFY at commit)
  }

  function pump(): void {
    if (writing || queue.length === 0) return;
    writing = true;
    const batch = queue.slice(0, maxBatch);
    queue = queue.slice(batch.length);
    inFlight = batch;
    void land(batch).finally(() => {
      writing = false;
      inFlight = [];
      pump();
    });
  }

  return {
    append(tenantId, runId, seq, event) {
      let resolve!: () => void;
      let reject!: (err: Error) => void;
      const done = new Promise<void>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      queue.push({ tenantId, runId, seq, event, resolve, reject, done });
      last = done.catch(() => {});
      // A microtask, not now: events appended in the same tick share one write.
      queueMicrotask(pump);
      return done;
    },
    flush: () => last,
    takeQueued(tenantId, runId) {
      const mine = (p: Pending) => p.runId === runId && p.tenantId === tenantId;
      const events = queue.filter(mine);
      if (events.length > 0) queue = queue.filter((p) => !mine(p));
      const writing = inFlight.filter(mine).map((p) => p.done.catch(() => {}));
      return { events, before: Promise.all(writing).then(() => {}) };
    },
    forget: (tenantId, runId) => void failed.delete(runKey(tenantId, runId)),
    close: () => last,
  };
}
