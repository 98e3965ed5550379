import { EventSourceParserStream } from 'eventsource-parser/stream';

/** Reading a workflow run stream (`GET /api/workflows/runs/{id}/stream`): named events (`snapshot`, `plan_status`) with JSON data. */
export interface PlanFrame {
  id: number;
  event: string;
  data: any;
}

export interface LivePlan {
  frames: PlanFrame[];
  /** Settles with every frame when the server closes the stream. */
  ended: Promise<PlanFrame[]>;
  close(): void;
}

export function followPlan(open: (signal: AbortSignal) => Promise<Response>): LivePlan {
  const controller = new AbortController();
  const frames: PlanFrame[] = [];
  const ended = (async () => {
    const res = await open(controller.signal);
    if (!res.ok || !res.body) throw new Error(`stream answered ${res.status}: ${await res.text()}`);
    try {
      for await (const f of res.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream())) {
        frames.push({ id: Number(f.id), event: f.event ?? 'message', data: JSON.parse(f.data) });
      }
    } catch (err) {
      if (!controller.signal.aborted) throw err;
    }
    return frames;
  })();
  ended.catch(() => {});
  return { frames, ended, close: () => controller.abort() };
}
