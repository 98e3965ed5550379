/** Newline-delimited JSON: one encoder and one decoder for every NDJSON stream (runner, worker). */

import { tickStream } from './tick-stream.ts';

const encoder = new TextEncoder();

export function encodeNdjsonLine(value: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(value) + '\n');
}

/**
 * Turns an async iterable of values into a byte stream, one JSON value per line, the lines that arrive in one turn of
 * the event loop written as one chunk (tick-stream.ts). Cancelling the stream aborts `onCancel`.
 */
export function ndjsonStream(source: AsyncIterable<unknown>, onCancel?: () => void): ReadableStream<Uint8Array> {
  return tickStream(source, (value) => JSON.stringify(value) + '\n', { onCancel });
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
      // a chunk may carry many lines: scan it once, and keep only the partial line after the last newline
      let start = 0;
      let nl: number;
      while ((nl = buffer.indexOf('\n', start)) >= 0) {
        const line = buffer.slice(start, nl).trim();
        start = nl + 1;
        if (line) yield JSON.parse(line) as T;
      }
      buffer = start === 0 ? buffer : buffer.slice(start);
    }
    buffer += decoder.decode();
    if (buffer.trim()) yield JSON.parse(buffer) as T;
  } finally {
    signal?.removeEventListener('abort', onAbort);
    reader.releaseLock();
  }
}
