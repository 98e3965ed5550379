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

/** A run stream read up to a point: the event it stopped at, what came before it, and the rest when asked. */
export interface StreamUpTo<E = RunEventLike> {
  /** The first event of the type asked for. */
  event: E;
  /** Every event read so far, that one last. */
  seen: E[];
  /** Reads the stream to its end: the events after `event`. */
  rest(): Promise<E[]>;
}

/** Reads an SSE run stream up to (and including) the first event of `type`; throws if it ends before one. */
export async function readUntil<E extends { type: string } = RunEventLike>(res: Response, type: string): Promise<StreamUpTo<E>> {
  const frames = sseFrames<E>(res);
  const seen: E[] = [];
  for (;;) {
    const next = await frames.next();
    if (next.done) throw new Error(`stream ended before ${type}: ${JSON.stringify(seen.map((e) => e.type))}`);
    seen.push(next.value.event);
    if (next.value.event.type === type) break;
  }
  return {
    event: seen.at(-1)!,
    seen,
    async rest() {
      const out: E[] = [];
      for await (const f of frames) out.push(f.event);
      return out;
    },
  };
}
