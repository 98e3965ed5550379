import type { ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';

/**
 * A minimal SSE writer over a node:http response that knows when the client has hung up, so scripted replies stop
 * writing (and never throw) once the connection is gone.
 */
export interface SseOut {
  /** Writes one frame; `event` is omitted for the Chat wire, which uses bare `data:` lines. */
  send(event: string | undefined, data: unknown): void;
  /** Raw `data: [DONE]` style line. */
  raw(line: string): void;
  /** Waits `ms` between frames; resolves false when the client went away meanwhile. */
  pause(ms: number): Promise<boolean>;
  readonly closed: boolean;
  /** Resolves when the client hangs up (HANG_AFTER_FIRST waits on it). */
  waitClosed(): Promise<void>;
  end(): void;
}

export function openSse(res: ServerResponse, headers: Record<string, string> = {}): SseOut {
  let closed = false;
  const gone = new Promise<void>((resolve) =>
    res.on('close', () => {
      closed = true;
      resolve();
    }),
  );
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', ...headers });
  res.flushHeaders();
  const write = (text: string) => {
    if (!closed) res.write(text);
  };
  return {
    send(event, data) {
      write(`${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`);
    },
    raw(line) {
      write(`${line}\n\n`);
    },
    async pause(ms) {
      if (ms > 0 && !closed) await delay(ms);
      return !closed;
    },
    get closed() {
      return closed;
    },
    waitClosed: () => gone,
    end() {
      if (!closed) res.end();
    },
  };
}

/** Drips deltas through `emit`, spaced by `intervalMs`; stops early when the client hangs up. */
export async function drip(out: SseOut, deltas: readonly string[], intervalMs: number, emit: (delta: string) => void): Promise<boolean> {
  for (let i = 0; i < deltas.length; i++) {
    if (i > 0 && !(await out.pause(intervalMs))) return false;
    if (out.closed) return false;
    emit(deltas[i]);
  }
  return !out.closed;
}
