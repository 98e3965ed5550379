import type { Database } from '../../../db/index.ts';
import type { RunEvent } from '../../../contracts/run-event.ts';
import type { Logger } from '../../../shared/log.ts';

/**
 * The live hub: subscribers of a run get its events as they happen. Events of runs driven by this conductor are
 * delivered in-process; every persisted batch is also announced with NOTIFY, so subscribers connected to another
 * replica read the new events from the log and see the same stream.
 */
export interface StoredEvent {
  seq: number;
  event: RunEvent;
}

export type Listener = (e: StoredEvent) => void;

export interface Hub {
  /** Delivers an event of a locally driven run. */
  publish(runId: string, e: StoredEvent): void;
  subscribe(runId: string, tenantId: string, fromSeq: number, listener: Listener): Subscribed;
  /** Announces that events up to `seq` are in the log (other replicas fetch them). */
  announce(batch: Array<{ tenantId: string; runId: string; seq: number }>): Promise<void>;
  /** Asks whichever replica drives `runId` to cancel it. */
  requestCancel(runId: string): Promise<void>;
  onCancelRequest(fn: (runId: string) => void): void;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface Subscribed {
  /** Marks events up to `seq` as seen (they were replayed from the log), so catch-up reads start after them. */
  advance(seq: number): void;
  unsubscribe(): void;
}

interface Subscription {
  tenantId: string;
  cursor: number;
  listener: Listener;
}

const EVENTS_CHANNEL = 'svc_run_events';
const CANCEL_CHANNEL = 'svc_run_cancel';

export function createHub(deps: { database: Database; fetchAfter: (tenantId: string, runId: string, afterSeq: number) => Promise<StoredEvent[]>; log: Logger }): Hub {
  const subs = new Map<string, Set<Subscription>>();
  const cancelHandlers: Array<(runId: string) => void> = [];
  const unlisteners: Array<() => Promise<void>> = [];
  const fetching = new Map<string, Promise<void>>();

  function deliver(runId: string, e: StoredEvent): void {
    for (const sub of subs.get(runId) ?? []) {
      if (e.seq <= sub.cursor) continue;
      sub.cursor = e.seq;
      sub.listener(e);
    }
  }

  /** A remote replica persisted events: read what our subscribers of that run have not seen yet. */
  async function catchUp(tenantId: string, runId: string, seq: number): Promise<void> {
    const set = subs.get(runId);
    if (!set?.size) return;
    const from = Math.min(...[...set].map((s) => s.cursor));
    if (from >= seq) return;
    const previous = fetching.get(runId) ?? Promise.resolve();
    const next = previous.then(async () => {
      const current = subs.get(runId);
      if (!current?.size) return;
      const start = Math.min(...[...current].map((s) => s.cursor));
      for (const e of await deps.fetchAfter(tenantId, runId, start)) deliver(runId, e);
    });
    fetching.set(runId, next.catch((err) => deps.log.warn('catching up on run events failed', { runId, error: String(err) })));
    await next.catch(() => {});
  }

  return {
    publish: deliver,
    subscribe(runId, tenantId, fromSeq, listener) {
      let set = subs.get(runId);
      if (!set) subs.set(runId, (set = new Set()));
      const sub: Subscription = { tenantId, cursor: fromSeq, listener };
      set.add(sub);
      return {
        advance(seq) {
          if (seq > sub.cursor) sub.cursor = seq;
        },
        unsubscribe() {
          set.delete(sub);
          if (set.size === 0) subs.delete(runId);
        },
      };
    },
    async announce(batch) {
      // One NOTIFY per run and flush; the payload stays far below PostgreSQL's 8000-byte limit.
      await Promise.all(batch.map((b) => deps.database.notify(EVENTS_CHANNEL, JSON.stringify({ t: b.tenantId, r: b.runId, s: b.seq }))));
    },
    async requestCancel(runId) {
      for (const fn of cancelHandlers) fn(runId);
      await deps.database.notify(CANCEL_CHANNEL, runId);
    },
    onCancelRequest(fn) {
      cancelHandlers.push(fn);
    },
    async start() {
      unlisteners.push(
        await deps.database.listen(EVENTS_CHANNEL, (payload) => {
          try {
            const { t, r, s } = JSON.parse(payload) as { t: string; r: string; s: number };
            void catchUp(t, r, s);
          } catch {
            deps.log.warn('ignoring malformed run event notification', { payload: payload.slice(0, 200) });
          }
        }),
        await deps.database.listen(CANCEL_CHANNEL, (runId) => cancelHandlers.forEach((fn) => fn(runId))),
      );
    },
    async stop() {
      for (const u of unlisteners.splice(0)) await u().catch(() => {});
    },
  };
}
