import { EventSourceParserStream } from 'eventsource-parser/stream';
import { isTerminal, runEvent, type RunEvent } from './run-event.ts';
import type { DelegatedRunRequest, Notification, NotificationRequest, RenewedRunToken, StartedRunRef } from './run-callbacks.ts';
import type { ApprovalRequest, ApprovalTicket } from './approvals.ts';
import { CallError, send, throwForStatus, trimBase, type FetchLike } from './http-client.ts';

/**
 * The runner's client for the conductor calls its tools make (see run-callbacks.ts). Every call carries the run's token
 * as `Authorization: Bearer`; the tenant comes from that token, never from the runner.
 */
export interface RunCallbacksClient {
  startRun(runToken: string, body: DelegatedRunRequest, signal?: AbortSignal): Promise<StartedRunRef>;
  /** The run's events from its SSE stream, ending with its one terminal event (a synthetic `error` if the stream breaks). */
  runEvents(runToken: string, runId: string, signal?: AbortSignal): AsyncGenerator<RunEvent>;
  /** Cooperative cancel (`DELETE /api/runs/{id}`): a delegating run that is cancelled takes its child with it. */
  cancelRun(runToken: string, runId: string): Promise<void>;
  notify(runToken: string, body: NotificationRequest, signal?: AbortSignal): Promise<Notification>;
  /** Rewrites the memory note of the automation whose firing this run is (`PUT /api/automations/self/memory`). */
  writeAutomationMemory(runToken: string, body: { body: string }, signal?: AbortSignal): Promise<{ body: string; updatedAt: string }>;
  /** Records a pending approval of this run's tool call (`POST /api/runs/self/approvals`; contracts/approvals.ts). */
  requestApproval(runToken: string, body: ApprovalRequest, signal?: AbortSignal): Promise<ApprovalTicket>;
  /** Trades the run's token, before it expires, for a fresh one of the same run (`POST /api/runs/self/token`). */
  renewRunToken(runToken: string, signal?: AbortSignal): Promise<RenewedRunToken>;
}

export function createRunCallbacksClient(opts: { baseUrl: string; fetch?: FetchLike }): RunCallbacksClient {
  const base = trimBase(opts.baseUrl);
  const fetchFn: FetchLike = opts.fetch ?? ((req) => fetch(req));

  async function call(token: string, method: string, path: string, json: unknown, signal: AbortSignal | undefined): Promise<Response> {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (json !== undefined) headers['content-type'] = 'application/json';
    else headers.accept = 'text/event-stream';
    const what = `conductor ${method} ${path}`;
    const res = await send(fetchFn, new Request(base + path, { method, headers, body: json === undefined ? undefined : JSON.stringify(json), signal }), what);
    if (!res.ok) await throwForStatus(res, what);
    return res;
  }

  return {
    async startRun(token, body, signal) {
      return (await call(token, 'POST', '/api/runs', body, signal)).json() as Promise<StartedRunRef>;
    },
    async *runEvents(token, runId, signal) {
      const res = await call(token, 'GET', `/api/runs/${encodeURIComponent(runId)}/stream`, undefined, signal);
      if (!res.body) throw new CallError(res.status, 'conductor run stream: response has no body');
      const frames = res.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
      try {
        for await (const frame of frames) {
          if (!frame.data) continue;
          const event = JSON.parse(frame.data) as RunEvent;
          yield event;
          if (isTerminal(event)) return;
        }
      } catch (err) {
        if (signal?.aborted) throw err;
        yield runEvent('error', { message: `run stream broke: ${err instanceof Error ? err.message : String(err)}` });
        return;
      }
      yield runEvent('error', { message: 'run stream ended without a result' });
    },
    async cancelRun(token, runId) {
      await (await call(token, 'DELETE', `/api/runs/${encodeURIComponent(runId)}`, undefined, undefined)).body?.cancel();
    },
    async notify(token, body, signal) {
      return (await call(token, 'POST', '/api/notifications', body, signal)).json() as Promise<Notification>;
    },
    async requestApproval(token, body, signal) {
      return (await call(token, 'POST', '/api/runs/self/approvals', body, signal)).json() as Promise<ApprovalTicket>;
    },
    async renewRunToken(token, signal) {
      return (await call(token, 'POST', '/api/runs/self/token', {}, signal)).json() as Promise<RenewedRunToken>;
    },
    async writeAutomationMemory(token, body, signal) {
      return (await call(token, 'PUT', '/api/automations/self/memory', body, signal)).json() as Promise<{ body: string; updatedAt: string }>;
    },
  };
}
