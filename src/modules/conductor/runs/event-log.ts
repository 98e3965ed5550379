import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { withTenantStatement } from '../../../db/index.ts';
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
 * id in the log, even if this process dies the next instant.
 *
 * A write that fails is retried with backoff, never dropped (a gap would make a resuming client skip events). Only
 * after `giveUpMs` of failures are its events rejected; the run is then marked failed, its later events are refused
 * too (nothing may land after the gap), and the driver ends it with one error right after its last stored event.
 */
export interface EventLog {
  /** Settles once the event is in the log; rejects if it never can be (the run must then end). */
  append(tenantId: string, runId: string, seq: number, event: RunEvent): Promise<void>;
  /** Settles once everything appended so far is stored or refused. */
  flush(): Promise<void>;
  /** The run has ended and its events have settled: drop its failed mark, if any. */
  forget(tenantId: string, runId: string): void;
  close(): Promise<void>;
}

interface Pending {
  tenantId: string;
  runId: string;
  seq: number;
  event: RunEvent;
  resolve(): void;
  reject(err: Error): void;
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
  let last: Promise<void> = Promise.resolve();
  /** Runs whose events could not be stored: nothing more of theirs is written, until the driver forgets them. */
  const failed = new Set<string>();

  async function write(batch: Pending[]): Promise<void> {
    const byTenant = new Map<string, Pending[]>();
    for (const p of batch) {
      let list = byTenant.get(p.tenantId);
      if (!list) byTenant.set(p.tenantId, (list = []));
      list.push(p);
    }
    for (const [tenantId, rows] of byTenant) {
      await withTenantStatement(deps.db, tenantId, (tx) => appendEvents(tx, tenantId, rows)); // one round trip
    }
  }

  async function land(batch: Pending[]): Promise<void> {
    const live = batch.filter((p) => {
      if (!failed.has(runKey(p.tenantId, p.runId))) return true;
      p.reject(new Error('an earlier event of this run could not be stored'));
      return false;
    });
    if (live.length === 0) return;
    try {
      await retryWithBackoff(() => write(live), {
        giveUpMs,
        signal: deps.databaseLost,
        onRetry: (err, attempt) => deps.log.warn('writing run events failed; retrying', { error: String(err), events: live.length, attempt }),
      });
    } catch (err) {
      deps.log.error('writing run events failed; giving up on their runs', { error: String(err), events: live.length });
      for (const p of live) failed.add(runKey(p.tenantId, p.runId));
      for (const p of live) p.reject(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    // other replicas hear of them from the insert's trigger (NOTIFY at commit)
    for (const p of live) p.resolve();
  }

  function pump(): void {
    if (writing || queue.length === 0) return;
    writing = true;
    const batch = queue.slice(0, maxBatch);
    queue = queue.slice(batch.length);
    void land(batch).finally(() => {
      writing = false;
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
    forget: (tenantId, runId) => void failed.delete(runKey(tenantId, runId)),
    close: () => last,
  };
}
