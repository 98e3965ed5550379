import { callErrorOf, untilAborted } from '../../contracts/direct.ts';
import { CallError } from '../../contracts/http-client.ts';
import type { WorkerClient } from '../../contracts/worker.client.ts';
import { activeTrace } from '../../shared/tracing/index.ts';
import { healthOf } from './health.routes.ts';
import { startWorkerRun } from './run.service.ts';
import { runtimeFor, type WorkerContext } from './worker.context.ts';

const encoder = new TextEncoder();

/**
 * The agent-worker contract's direct transport (contracts/worker.client.ts): what a runner in the same process calls
 * instead of the worker's routes. The same services as `POST /run`, `GET /health` and `GET/POST /state/{id}`, called
 * as functions: the run's events are the runtime's own objects, pulled by the runner (no NDJSON, no Request). The
 * caller is this process's runner, trusted: its run body is not validated again (the routes validate what arrives
 * over HTTP); failures are the CallErrors the HTTP client throws, with the statuses the routes answer.
 */
export function createDirectWorkerClient(ctx: WorkerContext, baseUrl: string): WorkerClient {
  return {
    baseUrl,
    async health(signal) {
      signal?.throwIfAborted();
      return healthOf(ctx);
    },
    async run(body, signal) {
      let run;
      try {
        signal.throwIfAborted();
        run = startWorkerRun(ctx, body, activeTrace(), signal);
      } catch (err) {
        throw callErrorOf(err, 'worker run', signal);
      }
      return { instanceId: ctx.instanceId, inflight: ctx.inflight, events: untilAborted(run.events, signal, run.cancel) };
    },
    async exportState(sessionId, runtime, o = {}) {
      try {
        o.signal?.throwIfAborted();
        const bundle = await runtimeFor(ctx, runtime, 'runtime').exportState(sessionId);
        if (!bundle) return undefined;
        const bytes = typeof bundle.body === 'string' ? encoder.encode(bundle.body) : bundle.body;
        if (bytes.byteLength > (o.maxBytes ?? Number.MAX_SAFE_INTEGER)) throw new CallError(413, 'worker state export: bundle is over the size cap');
        return { bytes, contentType: bundle.contentType, runtimeSessionId: bundle.runtimeSessionId };
      } catch (err) {
        throw callErrorOf(err, 'worker state export', o.signal);
      }
    },
    async importState(sessionId, runtime, bytes) {
      try {
        await runtimeFor(ctx, runtime, 'runtime').importState(sessionId, bytes);
      } catch (err) {
        throw callErrorOf(err, 'worker state import');
      }
    },
  };
}
