/**
 * The byte stream behind every NDJSON and SSE response: `source`'s items, each turned into text by `encode`, written
 * at most twice per turn of the event loop. The first item after a quiet turn is written at once; the items that
 * follow it within the same turn (the events of one socket read from upstream, a group commit's batch published to
 * the hub) leave together at the turn's end (`setImmediate`), or as soon as they hold `FLUSH_AT` characters. A stream
 * of 1,000 deltas costs a few dozen socket writes instead of 1,000, and one TextEncoder pass per chunk instead of one
 * per item; nothing waits for a timer, and an item that arrives alone is written alone, at once. The source is read ahead of the consumer by at most `MAX_PENDING`
 * characters; past that it waits until the consumer reads. Cancelling the stream (a client hanging up) calls
 * `onCancel` and ends the source's iteration.
 */
const encoder = new TextEncoder();
const MAX_PENDING = 256 * 1024;
const FLUSH_AT = 16 * 1024;

export interface TickStreamOptions {
  /** The reader hung up (the stream was cancelled). */
  onCancel?: () => void;
  /** The source failed: given this, the stream ends cleanly after what came before; without it, it errors. */
  onError?: (err: unknown) => void;
}

export function tickStream<T>(source: AsyncIterable<T>, encode: (item: T) => string, opts: TickStreamOptions = {}): ReadableStream<Uint8Array> {
  const iterator = source[Symbol.asyncIterator]();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let pending = '';
  let scheduled = false;
  let done = false;
  /** The source's reader, waiting for the consumer to take what is pending. */
  let room: (() => void) | undefined;

  /** A flush found the consumer behind: the consumer's next pull writes what is pending. */
  let stalled = false;

  function onTick(): void {
    scheduled = false;
    flush();
  }

  function flush(): void {
    if (done) return;
    stalled = false;
    if (pending) {
      if ((controller.desiredSize ?? 1) > 0) {
        const text = pending;
        pending = ''; // before enqueue, which may call pull() at once
        controller.enqueue(encoder.encode(text));
      } else stalled = true;
    }
    if (room && pending.length < MAX_PENDING) {
      const resume = room;
      room = undefined;
      resume();
    }
  }

  async function pump(): Promise<void> {
    try {
      while (!done) {
        const next = await iterator.next();
        if (done) return;
        if (next.done) break;
        pending += encode(next.value);
        // a burst that runs long within one turn (a runtime working through a buffered model response) goes out in
        // pieces, so the next process down the line starts on it while this one is still busy
        if (pending.length >= FLUSH_AT) flush();
        else if (!scheduled) {
          // the first item after a quiet turn goes at once (a run's first event waits for nothing); what follows it
          // within the same turn goes at the turn's end
          flush();
          scheduled = true;
          setImmediate(onTick);
        }
        if (pending.length >= MAX_PENDING) await new Promise<void>((resolve) => (room = resolve));
      }
    } catch (err) {
      if (done) return;
      if (!opts.onError) {
        done = true;
        controller.error(err);
        return;
      }
      opts.onError(err); // then end like a source that ended, after what came before the failure
    }
    // the source ended: what is pending goes once the consumer has room, then the stream closes
    while (pending && !done) {
      flush();
      if (pending) await new Promise<void>((resolve) => (room = resolve));
    }
    if (!done) {
      done = true;
      controller.close();
    }
  }

  return new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
      void pump();
    },
    pull() {
      if (stalled || room) flush();
    },
    async cancel() {
      if (done) return;
      done = true;
      pending = '';
      room?.();
      opts.onCancel?.();
      await iterator.return?.();
    },
  });
}
