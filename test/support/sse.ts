import { EventSourceParserStream } from 'eventsource-parser/stream';

/**
 * Reading a conductor run stream (`GET /api/runs/{id}/stream`) over real HTTP: each SSE frame is `id: <seq>` plus one
 * `data:` line holding a RunEvent; the server closes the stream after the terminal `result` or `error`.
 */
export interface SseFrame<E = RunEventLike> {
  id: number;
  event: E;
}

export interface RunEventLike {
  type: string;
  message?: string;
  delta?: boolean;
  [key: string]: unknown;
}

export const isTerminalEvent = (e: { type: string }) => e.type === 'result' || e.type === 'error';

/** Iterates the frames of an SSE response as they arrive (comments and keep-alives are skipped by the parser). */
export async function* sseFrames<E = RunEventLike>(res: Response): AsyncGenerator<SseFrame<E>> {
  if (!res.ok || !res.body) throw new Error(`stream answered ${res.status}: ${await res.text()}`);
  const frames = res.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
  for await (const frame of frames) yield { id: Number(frame.id), event: JSON.parse(frame.data) as E };
}

/** Reads an SSE response until the server closes it. */
export async function readSse<E = RunEventLike>(res: Response): Promise<SseFrame<E>[]> {
  const out: SseFrame<E>[] = [];
  for await (const frame of sseFrames<E>(res)) out.push(frame);
  return out;
}

/** A stream being read in the background: `frames` fills as they arrive; `ended` settles when the server closes it. */
export interface LiveSse<E = RunEventLike> {
  frames: SseFrame<E>[];
  ended: Promise<SseFrame<E>[]>;
  /** Hangs up (like a client that goes away); `ended` then resolves with what arrived. */
  close(): void;
}

export function followSse<E = RunEventLike>(open: (signal: AbortSignal) => Promise<Response>): LiveSse<E> {
  const controller = new AbortController();
  const frames: SseFrame<E>[] = [];
  const ended = (async () => {
    try {
      for await (const frame of sseFrames<E>(await open(controller.signal))) frames.push(frame);
    } catch (err) {
      if (!controller.signal.aborted) throw err;
    }
    return frames;
  })();
  ended.catch(() => {}); // observed by whoever awaits it
  return { frames, ended, close: () => controller.abort() };
}
