import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';

/**
 * Server-Sent Events, shared by every stream svc serves (the run stream `GET /api/runs/{id}/stream`, the /v1 session
 * event stream, the workflow plan stream, the chat gateway's SSE and Chat Completions streams): one encoder, and one
 * loop that writes a source of items as frames and its keep-alive ticks as comments.
 */
export interface SseFrame {
  id?: string;
  event?: string;
  data: string;
}

const encoder = new TextEncoder();

/** `event:`, the `data:` lines, then `id:`: the order both streams have always sent (Hono's `writeSSE` order). */
export function encodeSseFrame(frame: SseFrame): Uint8Array {
  let out = '';
  if (frame.event !== undefined) out += `event: ${frame.event}\n`;
  for (const line of frame.data.split(/\r\n|\r|\n/)) out += `data: ${line}\n`;
  if (frame.id !== undefined) out += `id: ${frame.id}\n`;
  return encoder.encode(out + '\n');
}

export function encodeSseComment(text: string): Uint8Array {
  return encoder.encode(`: ${text}\n\n`);
}

const KEEP_ALIVE = encodeSseComment('keep-alive');

/**
 * Answers with an SSE stream of `items`, each written as `toFrame(item)`; `null` items are keep-alive ticks. The
 * stream ends when `items` does; a client that hangs up aborts `abort` (the source's signal).
 */
export function sseResponse<T>(c: Context, items: AsyncIterable<T | null>, toFrame: (item: T) => SseFrame, abort: AbortController): Response {
  c.header('Cache-Control', 'no-cache');
  c.header('X-Accel-Buffering', 'no');
  return streamSSE(c, async (stream) => {
    stream.onAbort(() => abort.abort());
    for await (const item of items) await stream.write(item === null ? KEEP_ALIVE : encodeSseFrame(toFrame(item)));
  });
}
