import type { Database } from '../../../db/index.ts';
import type { RunEvent } from '../../../contracts/run-event.ts';
import type { Logger } from '../../../shared/log.ts';
import { runKey } from './active-runs.ts';

/**
 * The live hub: subscribers of a run get its events as they happen. Events of runs driven by this conductor are
 * delivered in-process; every persisted batch is also announced with NOTIFY (by the insert's trigger,
 * sql/0022_run_events_notify.sql, when its transaction commits), so subscribers connected to another replica read the
 * new events from the log and see the same stream. A run is named by tenant and id everywhere (ids
 * are unique per tenant only), in-process and in the notifications between replicas.
 */
export interface StoredEvent {
  seq: number;
  event: RunEvent;
}

export type Listener = (e: StoredEvent) => void;

export interface Hub {
  /** Delivers an event of a locally driven run. */
  publish(tenantId: string, runId: string, e: StoredEvent): void;
  subscribe(tenantId: string, runId: string, fromSeq: number, listener: Listener): Subscribed;
  /** Asks whichever replica drives the tenant's run `runId` to cancel it. */
  requestCancel(tenantId: string, runId: string): Promise<void>;
  onCancelRequest(fn: (tenantId: string, runId: string) => void): void;
  /** Runs with a catch-up read in flight (tests and diagnostics): zero once every followed stream is done. */
  catchUps(): number;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface Subscribed {
  /** Marks events up to `seq` as seen (they were replayed from the log), so catch-up reads start after them. */
  advance(seq: number): void;
  unsubscribe(): void;
}

interface Subscription {
  cursor: number;
  listener: Listener;
}

const EVENTS_CHANNEL = 'svc_run_events';
const CANCEL_CHANNEL = 'svc_run_cancel';

export function createHub(deps: {
  database: Database;
  fetchAfter: (tenantId: string, runId: string, afterSeq: number) => Promise<StoredEvent[]>;
  log: Logger;
  /**
   * The run is driven by this process: its driver publishes every stored event here, in order (and publish() reads a
   * gap from the log itself), so the notification of its stored events needs no read of the log. Without this, the
   * notification of our own inserts, arriving before the driver's publish, made about one log read per run.
   */
  isDrivenHere?: (tenantId: string, runId: string) => boolean;
}): Hub {
  /** Subscriptions by runKey(tenant, run). */
  const subs = new Map<string, Set<Subscription>>();
  const cancelHandlers: Array<(tenantId: string, runId: string) => void> = [];
  const unlisteners: Array<() => Promise<void>> = [];
  const fetching = new Map<string, Promise<void>>();

  function deliver(key: string, e: StoredEvent): void {
    for (const sub of subs.get(key) ?? []) {
      if (e.seq <= sub.cursor) continue;
      sub.cursor = e.seq;
      sub.listener(e);
    }
  }

  /** A remote replica persisted events: read what our subscribers of that run have not seen yet. */
  async function catchUp(tenantId: string, runId: string, seq: number): Promise<void> {
    const key = runKey(tenantId, runId);
    const set = subs.get(key);
    if (!set?.size) return;
    const from = Math.min(...[...set].map((s) => s.cursor));
    if (from >= seq) return;
    const previous = fetching.get(key) ?? Promise.resolve();
    const next = previous.then(async () => {
      const current = subs.get(key);
      if (!current?.size) return;
      const start = Math.min(...[...current].map((s) => s.cursor));
      for (const e of await deps.fetchAfter(tenantId, runId, start)) deliver(key, e);
    });
    // Reads of one run are chained so they deliver in order; the chain's entry goes once its last read settles.
    const entry = next
      .catch((err) => deps.log.warn('catching up on run events failed', { runId, error: String(err) }))
      .finally(() => {
        if (fetching.get(key) === entry) fetching.delete(key);
      });
    fetching.set(key, entry);
    await entry;
  }

  return {
    publish(tenantId, runId, e) {
      // A subscriber that has not seen the event before this one (it followed the run from the log while another
      // replica drove it, and this replica adopted the run) reads the gap from the log first: the log holds every
      // event up to a published one, and catch-up reads deliver in order.
      const key = runKey(tenantId, runId);
      let behind = false;
      for (const sub of subs.get(key) ?? []) {
        if (e.seq <= sub.cursor) continue;
        if (e.seq > sub.cursor + 1) {
          behind = true;
          continue;
        }
        sub.cursor = e.seq;
        sub.listener(e);
      }
      if (behind) void catchUp(tenantId, runId, e.seq);
    },
    subscribe(tenantId, runId, fromSeq, listener) {
      const key = runKey(tenantId, runId);
      let set = subs.get(key);
      if (!set) subs.set(key, (set = new Set()));
      const sub: Subscription = { cursor: fromSeq, listener };
      set.add(sub);
      return {
        advance(seq) {
          if (seq > sub.cursor) sub.cursor = seq;
        },
        unsubscribe() {
          set.delete(sub);
          if (set.size === 0) subs.delete(key);
        },
      };
    },
    async requestCancel(tenantId, runId) {
      for (const fn of cancelHandlers) fn(tenantId, runId);
      await deps.database.notify(CANCEL_CHANNEL, JSON.stringify({ t: tenantId, r: runId }));
    },
    onCancelRequest(fn) {
      cancelHandlers.push(fn);
    },
    catchUps: () => fetching.size,
    async start() {
      const listening = await Promise.all([
        deps.database.listen(EVENTS_CHANNEL, (payload) => {
          try {
            const { t, r, s } = JSON.parse(payload) as { t: string; r: string; s: number };
            if (!deps.isDrivenHere?.(t, r)) void catchUp(t, r, s);
          } catch {
            deps.log.warn('ignoring malformed run event notification', { payload: payload.slice(0, 200) });
          }
        }),
        deps.database.listen(CANCEL_CHANNEL, (payload) => {
          try {
            const { t, r } = JSON.parse(payload) as { t: string; r: string };
            cancelHandlers.forEach((fn) => fn(t, r));
          } catch {
            deps.log.warn('ignoring malformed cancel notification', { payload: payload.slice(0, 200) });
          }
        }),
      ]);
      unlisteners.push(...listening);
    },
    async stop() {
      const unlisten = unlisteners.splice(0);
      if (deps.database.lost.aborted) return; // a lost database holds no LISTEN to end (nor answers the UNLISTEN)
      for (const u of unlisten) await u().catch(() => {});
    },
  };
}
