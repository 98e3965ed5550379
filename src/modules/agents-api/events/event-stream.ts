import type { Context } from 'hono';
import { AsyncQueue } from '../../../shared/async-queue.ts';
import { describeError } from '../../../shared/errors.ts';
import { randomId } from '../../../shared/ids.ts';
import { createLogger } from '../../../shared/log.ts';
import { sseResponse as writeSse } from '../../../shared/sse.ts';
import type { SessionEvent } from '../wire.ts';
import type { EventStore, StoredSessionEvent } from './event-store.ts';

/**
 * A subscription to a session's events (spec §8.1, 8.2, 8.9, 8.10, 8.21). The listener is registered before anything
 * else, so no event published after the call is lost; with `afterSeq` the durable log is replayed first, without it
 * nothing earlier is replayed. Events are buffered per subscriber (a client busy running a tool handler is not
 * dropped), de-duplicated by sequence, and `null` items are keep-alive ticks, at which the log is also read for
 * events written by another conductor replica. Once the database is lost for good (`store.lost`), the subscription
 * throws `StreamLost` after what was already published: its stream then ends with an error naming the cause.
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

  const signal = AbortSignal.any([opts.signal, store.closing, store.lost]);
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
        if (signal.aborted) {
          if (store.lost.aborted && !opts.signal.aborted) throw new StreamLost(store.lost.reason);
          return;
        }
        for (const missed of await store.after(tenantId, sessionId, cursor)) {
          cursor = missed.seq;
          yield missed.event;
          if (opts.until?.(missed.event)) return;
        }
        yield null;
      }
    } catch (err) {
      // a read of the log that failed because the database is gone says so, not that the stream failed
      throw store.lost.aborted && !(err instanceof StreamLost) ? new StreamLost(store.lost.reason) : err;
    } finally {
      unsubscribe();
    }
  })();
}

/** A subscription ended because the database is gone for good; the message names the cause, for the client. */
export class StreamLost extends Error {
  constructor(reason: unknown) {
    super(`the session's event stream was interrupted: ${describeError(reason)}`);
  }
}

const log = createLogger('agents:events');

/**
 * Writes a subscription as SSE: `id:` = event_id, `event:` = type, JSON data; keep-alives are comment lines. A source
 * that fails after the headers went out (the event log cannot be read) ends the stream with one `error` event (spec
 * §5.2, `SessionError`; the SDK throws it), never a silent end that a client would take for a finished stream. That
 * frame carries no `id:`, so a client that reconnects resumes after the last real event. A subscription that ended
 * because the database is gone for good (`StreamLost`) ends the same way, its message naming the cause; a turn in
 * flight then gets no end event of its own (none can be recorded), the error is the stream's one last frame.
 */
export function sseResponse(c: Context, sessionId: string, events: AsyncGenerator<SessionEvent | null>, abort: AbortController): Response {
  return writeSse(c, endingWithError(sessionId, events), (e) => (e.type === 'error' ? { event: e.type, data: JSON.stringify(e) } : { id: e.event_id, event: e.type, data: JSON.stringify(e) }), abort);
}

async function* endingWithError(sessionId: string, events: AsyncGenerator<SessionEvent | null>): AsyncGenerator<SessionEvent | null> {
  let last: string | undefined;
  try {
    for await (const e of events) {
      if (e) last = e.event_id;
      yield e;
    }
  } catch (err) {
    // the lost database is reported once, by the server that stops because of it
    if (!(err instanceof StreamLost)) log.warn('a session event stream failed; ending it with an error event', { sessionId, error: describeError(err) });
    const resume = last ? `reconnect with Last-Event-ID: ${last} to resume` : 'reconnect to resume';
    const message = err instanceof StreamLost ? err.message : `the session's event stream failed on the server; ${resume}`;
    yield { event_id: `evt_error_${randomId(16)}`, type: 'error', session_id: sessionId, error: { code: 'server_error', message, param: null, type: 'server_error' } };
  }
}
