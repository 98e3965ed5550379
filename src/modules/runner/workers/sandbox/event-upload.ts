import { isTerminal, type RunEvent } from '../../../../contracts/run-event.ts';
import { createLogger } from '../../../../shared/log.ts';

/**
 * Reading one event upload (`POST /worker/sessions/{id}/events`): NDJSON RunEvents, one per line, within the seed's
 * limits — a line over `lineBytes` or an upload over `totalBytes` is 413, an upload open longer than `maxMs` 408, a
 * line that is not a run event 400. Events after the first terminal are dropped.
 */
export interface UploadLimits {
  lineBytes: number;
  totalBytes: number;
  maxMs: number;
}

export class UploadError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

const log = createLogger('runner:sandbox-workers');

export async function readEventUpload(
  body: ReadableStream<Uint8Array> | null,
  limits: UploadLimits,
  hooks: {
    onEvent(event: RunEvent): void;
    /** Hands out the function that stops the upload while it is read (undefined once it is over). */
    onStoppable(stop: ((err: UploadError) => void) | undefined): void;
  },
): Promise<{ failure: UploadError | undefined; terminal: boolean }> {
  if (!body) return { failure: undefined, terminal: false };
  const reader = body.getReader();
  let failure: UploadError | undefined;
  const stop = (err: UploadError) => {
    failure ??= err;
    reader.cancel().catch(() => {});
  };
  hooks.onStoppable(stop);
  const timer = setTimeout(() => stop(new UploadError(408, `event upload open longer than ${Math.round(limits.maxMs / 60_000)} minutes`)), limits.maxMs);
  let total = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let terminal = false;
  let lineNo = 0;
  const handleLine = (line: Buffer) => {
    lineNo++;
    const text = line.toString('utf8').trim();
    if (!text || terminal) return;
    let event: RunEvent;
    try {
      event = JSON.parse(text) as RunEvent;
      if (!event || typeof event !== 'object' || typeof event.type !== 'string') throw new Error('no type');
    } catch {
      return stop(new UploadError(400, `event upload: line ${lineNo} is not a run event`));
    }
    hooks.onEvent({ ...event, ts: event.ts ?? new Date().toISOString() });
    if (isTerminal(event)) terminal = true;
  };
  try {
    while (!failure) {
      const { value, done } = await reader.read();
      if (done || failure) break;
      total += value.byteLength;
      if (total > limits.totalBytes) {
        stop(new UploadError(413, `event upload over ${limits.totalBytes} bytes`));
        break;
      }
      const chunk = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
      let start = 0;
      while (!failure) {
        const nl = chunk.indexOf(10, start);
        const piece = chunk.subarray(start, nl < 0 ? chunk.length : nl);
        if (pendingBytes + piece.length > limits.lineBytes) {
          stop(new UploadError(413, `event upload line over ${limits.lineBytes} bytes`));
          break;
        }
        if (nl < 0) {
          if (piece.length) pending.push(Buffer.from(piece));
          pendingBytes += piece.length;
          break;
        }
        handleLine(pending.length ? Buffer.concat([...pending, piece]) : piece);
        pending = [];
        pendingBytes = 0;
        start = nl + 1;
      }
    }
    if (!failure && pendingBytes) handleLine(Buffer.concat(pending));
  } catch (err) {
    // the worker went away mid-upload: the same as closing it
    log.debug('event upload broke', { error: err instanceof Error ? err.message : String(err) });
  } finally {
    clearTimeout(timer);
    hooks.onStoppable(undefined);
    reader.releaseLock?.();
  }
  return { failure, terminal };
}
