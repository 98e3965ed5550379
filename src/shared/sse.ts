import type { Context } from 'hono';
import { createLogger } from './log.ts';
import { tickStream } from './tick-stream.ts';

/**
 * Server-Sent Events, shared by every stream svc serves (the run stream `GET /api/runs/{id}/stream`, the /v1 session
 * event stream, the workflow plan stream, the chat gateway's SSE and Chat Completions streams): one encoder, and one
 * writer of a source of items as frames and its keep-alive ticks as comments, the frames of one event-loop turn in one
 * socket write (tick-stream.ts).
 */
export interface SseFrame {
  id?: string;
  event?: string;
  data: string;
}

const encoder = new TextEncoder();
const log = createLogger('sse');

/** `event:`, the `data:` lines, then `id:`: the order both streams have always sent (Hono's `writeSSE` order). */
export function sseFrameText(frame: SseFrame): string {
  let out = '';
  if (frame.event !== undefined) out += `event: ${frame.event}\n`;
  // JSON never holds a raw line break: the usual frame is one data line
  if (frame.data.includes('\n') || frame.data.includes('\r')) for (const line of frame.data.split(/\r\n|\r|\n/)) out += `data: ${line}\n`;
  else out += `data: ${frame.data}\n`;
  if (frame.id !== undefined) out += `id: ${frame.id}\n`;
  return out + '\n';
}

export function encodeSseFrame(frame: SseFrame): Uint8Array {
  return encoder.encode(sseFrameText(frame));
}

export function encodeSseComment(text: string): Uint8Array {
  return encoder.encode(`: ${text}\n\n`);
}

const KEEP_ALIVE = ': keep-alive\n\n';

/**
 * Answers with an SSE stream of `items`, each written as `toFrame(item)` (a frame, or a frame's text from
 * `sseFrameText` that the caller keeps to share among subscribers); `null` items are keep-alive ticks. The stream ends
 * when `items` does (a source that fails is logged and ends the stream); a client that hangs up aborts `abort` (the
 * source's signal).
 */
export function sseResponse<T>(c: Context, items: AsyncIterable<T | null>, toFrame: (item: T) => SseFrame | string, abort: AbortController): Response {
  const body = tickStream(
    items,
    (item) => {
      if (item === null) return KEEP_ALIVE;
      const frame = toFrame(item);
      return typeof frame === 'string' ? frame : sseFrameText(frame);
    },
    { onCancel: () => abort.abort(), onError: (err) => log.warn('an SSE stream source failed; ending the stream', { error: String(err) }) },
  );
  return c.body(body, 200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
}

