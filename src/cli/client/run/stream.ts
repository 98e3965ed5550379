import { EventSourceParserStream } from 'eventsource-parser/stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { NetworkError, type Api } from '../http.ts';

/** A run event as GET /api/runs/{id}/stream serves it (see src/contracts/run-event.ts). */
export interface StreamEvent {
  type: string;
  message?: string;
  toolName?: string;
  toolCallId?: string;
  input?: unknown;
  output?: unknown;
  isError?: boolean;
  delta?: boolean;
  usage?: { inputTokens: number; outputTokens: number };
  /** `approval_required` / `approval_decided` (a tool under an `ask` permission). */
  approvalId?: string;
  expiresAt?: string;
  decision?: string;
  reason?: string;
  ts?: string;
}

const TERMINAL = new Set(['result', 'error']);

/**
 * Follows a run's SSE stream to its terminal event. A dropped connection is resumed with Last-Event-ID (the server
 * replays what was missed), a few times, before giving up.
 */
export async function* followRun(api: Api, runId: string, signal: AbortSignal): AsyncGenerator<StreamEvent> {
  let last = 0;
  let failures = 0;
  for (;;) {
    try {
      const headers = last ? { 'last-event-id': String(last) } : undefined;
      const res = await api.raw('GET', `/api/runs/${encodeURIComponent(runId)}/stream`, { signal, accept: 'text/event-stream', headers });
      const frames = res.body!.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
      for await (const frame of frames) {
        if (frame.id) last = Number(frame.id) || last;
        const event = JSON.parse(frame.data) as StreamEvent;
        failures = 0;
        yield event;
        if (TERMINAL.has(event.type)) return;
      }
    } catch (err) {
      if (signal.aborted) throw err;
      if (!(err instanceof NetworkError || (err instanceof TypeError && /terminated|fetch failed/i.test(err.message)))) throw err;
    }
    if (++failures > 5) throw new NetworkError(api.baseUrl, `the stream of run ${runId} broke off and could not be resumed`);
    await sleep(200 * failures, undefined, { signal });
  }
}
