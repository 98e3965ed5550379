import { readNdjson } from '../shared/ndjson.ts';
import type { RunEvent } from './run-event.ts';
import {
  RUNTIME_SESSION_HEADER,
  WORKER_INFLIGHT_HEADER,
  WORKER_INSTANCE_HEADER,
  type Runtime,
  type WorkerHealth,
  type WorkerRunRequest,
} from './worker.ts';
import { CallError, readCapped, send, throwForStatus, trimBase, type FetchLike } from './http-client.ts';
import { injectTrace } from '../shared/tracing/index.ts';

/**
 * Typed client for the agent-worker API (seed 000, "Agent-worker API"). The runner uses it to probe a sidecar, start a
 * run and move state bundles. It only ever calls the `fetch` it is given (global fetch, or the worker app in-process).
 */
export interface WorkerRun {
  /** `X-Svc-Worker-Instance` of the worker that took the run ('' when the worker does not send it). */
  instanceId: string;
  /** `X-Svc-Worker-Inflight` at response start (undefined when absent). */
  inflight: number | undefined;
  /** The NDJSON events as they arrive; throws when the stream breaks, ends when the worker closes it. */
  events: AsyncIterable<RunEvent>;
}

export interface StateBundle {
  bytes: Uint8Array;
  contentType: string;
  runtimeSessionId: string;
}

export interface WorkerClient {
  readonly baseUrl: string;
  health(signal?: AbortSignal): Promise<WorkerHealth>;
  run(body: WorkerRunRequest, signal: AbortSignal): Promise<WorkerRun>;
  /** undefined when the worker has no state for the session (404). Throws CallError 'too large' past `maxBytes`. */
  exportState(sessionId: string, runtime: Runtime, opts?: { maxBytes?: number; signal?: AbortSignal }): Promise<StateBundle | undefined>;
  importState(sessionId: string, runtime: Runtime, bytes: Uint8Array, contentType: string, runtimeSessionId: string): Promise<void>;
}

export function createWorkerClient(opts: { baseUrl: string; fetch?: FetchLike }): WorkerClient {
  const base = trimBase(opts.baseUrl);
  const fetchFn: FetchLike = opts.fetch ?? ((req) => fetch(req));
  const statePath = (sessionId: string, runtime: Runtime) => `${base}/state/${encodeURIComponent(sessionId)}?runtime=${runtime}`;

  return {
    baseUrl: base,

    async health(signal) {
      const res = await send(fetchFn, new Request(`${base}/health`, { signal }), 'worker health');
      if (!res.ok) await throwForStatus(res, 'worker health');
      const body = (await res.json()) as WorkerHealth;
      // the header is authoritative for the instance id; older sidecars only send {ok, runtime}
      return { ...body, instanceId: res.headers.get(WORKER_INSTANCE_HEADER) ?? body.instanceId ?? '' };
    },

    async run(body, signal) {
      const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/x-ndjson' };
      injectTrace(headers); // the runner's run span continues on the worker
      const req = new Request(`${base}/run`, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        signal,
      });
      const res = await send(fetchFn, req, 'worker run');
      if (!res.ok) await throwForStatus(res, 'worker run');
      if (!res.body) throw new CallError(res.status, 'worker run: response has no body');
      const inflight = Number(res.headers.get(WORKER_INFLIGHT_HEADER) ?? NaN);
      return {
        instanceId: res.headers.get(WORKER_INSTANCE_HEADER) ?? '',
        inflight: Number.isFinite(inflight) ? inflight : undefined,
        events: readNdjson<RunEvent>(res.body, signal),
      };
    },

    async exportState(sessionId, runtime, o = {}) {
      const res = await send(fetchFn, new Request(statePath(sessionId, runtime), { signal: o.signal }), 'worker state export');
      if (res.status === 404) {
        await res.body?.cancel().catch(() => {});
        return undefined;
      }
      if (!res.ok) await throwForStatus(res, 'worker state export');
      const bytes = await readCapped(res, o.maxBytes ?? Number.MAX_SAFE_INTEGER);
      if (!bytes) throw new CallError(413, 'worker state export: bundle is over the size cap');
      return {
        bytes,
        contentType: res.headers.get('content-type') ?? 'application/octet-stream',
        runtimeSessionId: res.headers.get(RUNTIME_SESSION_HEADER) ?? '',
      };
    },

    async importState(sessionId, runtime, bytes, contentType, runtimeSessionId) {
      const headers: Record<string, string> = { 'content-type': contentType || 'application/octet-stream' };
      if (runtimeSessionId) headers[RUNTIME_SESSION_HEADER] = runtimeSessionId;
      const req = new Request(statePath(sessionId, runtime), { method: 'POST', headers, body: bytes as Uint8Array<ArrayBuffer> });
      const res = await send(fetchFn, req, 'worker state import');
      if (!res.ok) await throwForStatus(res, 'worker state import');
      await res.body?.cancel().catch(() => {});
    },
  };
}
