/** Newline-delimited JSON: one encoder and one decoder for every NDJSON stream (runner, worker). */

const encoder = new TextEncoder();

export function encodeNdjsonLine(value: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(value) + '\n');
}

/** Turns an async iterable of values into a byte stream, one JSON value per line. Cancelling the stream aborts `onCancel`. */
export function ndjsonStream(source: AsyncIterable<unknown>, onCancel?: () => void): ReadableStream<Uint8Array> {
  const iterator = source[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await iterator.next();
        if (next.done) controller.close();
        else controller.enqueue(encodeNdjsonLine(next.value));
      } catch (err) {
        controller.error(err);
      }
    },
    async cancel() {
      onCancel?.();
      await iterator.return?.();
    },
  });
}

/** Parses a byte stream of NDJSON into values. A trailing partial line without newline is parsed too. */
export async function* readNdjson<T = unknown>(body: ReadableStream<Uint8Array>, signal?: AbortSignal): AsyncGenerator<T> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const onAbort = () => reader.cancel().catch(() => {});
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl).trim();
        buffer = buffer.slice(nl + 1);
        if (line) yield JSON.parse(line) as T;
      }
    }
    buffer += decoder.decode();
    if (buffer.trim()) yield JSON.parse(buffer) as T;
  } finally {
    signal?.removeEventListener('abort', onAbort);
    reader.releaseLock();
  }
}
