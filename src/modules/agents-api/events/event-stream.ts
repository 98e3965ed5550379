import type { Context } from 'hono';
import { AsyncQueue } from '../../../shared/async-queue.ts';
import { sseResponse as writeSse } from '../../../shared/sse.ts';
import type { SessionEvent } from '../wire.ts';
import type { EventStore, StoredSessionEvent } from './event-store.ts';

/**
 * A subscription to a session's events (spec §8.1, 8.2, 8.9, 8.10, 8.21). The listener is registered before anything
 * else, so no event published after the call is lost; with `afterSeq` the durable log is replayed first, without it
 * nothing earlier is replayed. Events are buffered per subscriber (a client busy running a tool handler is not
 * dropped), de-duplicated by sequence, and `null` items are keep-alive ticks, at which the log is also read for
 * events written by another conductor replica.
 */
export interface SubscribeOptions {
  afterSeq?: number;
  keepAliveMs: number;
  signal: AbortSignal;
  /** Ends the stream after the event for which this returns true. */
  until?: (e: SessionEvent) => boolean;
}

export async function subscribe(store: EventStore, tenantId: string, sessionId: string, opts: SubscribeOptions): Promise<AsyncGenerator<SessionEvent | null>> {
  const queue = new AsyncQueue<StoredSessionEvent>();
  const arrived: StoredSessionEvent[] = [];
  let ready = false;
  const unsubscribe = store.subscribe(sessionId, (e) => (ready ? queue.push(e) : arrived.push(e)));
  let cursor: number;
  let replay: StoredSessionEvent[] = [];
  try {
    if (opts.afterSeq !== undefined) {
      cursor = opts.afterSeq;
      replay = await store.after(tenantId, sessionId, cursor);
    } else {
      // events published while we looked are live for this subscriber; anything durable before that is history
      const max = await store.maxSeq(tenantId, sessionId);
      cursor = Math.min(max, (arrived[0]?.seq ?? Infinity) - 1);
    }
  } catch (err) {
    unsubscribe();
    throw err;
  }
  ready = true;
  for (const e of arrived) queue.push(e);

  const signal = AbortSignal.any([opts.signal, store.closing]);
  return (async function* () {
    try {
      for (const e of replay) {
        if (e.seq <= cursor) continue;
        cursor = e.seq;
        yield e.event;
        if (opts.until?.(e.event)) return;
      }
      // once aborted, what was already published is still delivered (the queue hands out its items before it looks at
      // the signal): the store publishes everything it wrote before it closes, the last turn's end and idle included
      for (;;) {
        const e = await queue.next(opts.keepAliveMs, signal);
        if (e) {
          if (e.seq <= cursor) continue;
          cursor = e.seq;
          yield e.event;
          if (opts.until?.(e.event)) return;
          continue;
        }
        if (signal.aborted) return;
        for (const missed of await store.after(tenantId, sessionId, cursor)) {
          cursor = missed.seq;
          yield missed.event;
          if (opts.until?.(missed.event)) return;
        }
        yield null;
      }
    } finally {
      unsubscribe();
    }
  })();
}

/** Writes a subscription as SSE: `id:` = event_id, `event:` = type, JSON data; keep-alives are comment lines. */
export function sseResponse(c: Context, events: AsyncGenerator<SessionEvent | null>, abort: AbortController): Response {
  return writeSse(c, events, (e) => ({ id: e.event_id, event: e.type, data: JSON.stringify(e) }), abort);
}
