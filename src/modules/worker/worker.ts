import { Hono } from 'hono';
import type { Config } from '../../config/config.ts';
import { RUNTIMES, WORKER_INSTANCE_HEADER, type Runtime } from '../../contracts/worker.ts';
import { randomId } from '../../shared/ids.ts';
import { useJsonErrors } from '../../shared/http.ts';
import type { WorkerRuntime } from './runtime.ts';
import { createGeneralRuntime } from './runtimes/general/index.ts';
import { createUnavailableRuntime } from './runtimes/unavailable.ts';
import { healthRoutes } from './health.routes.ts';
import { runRoutes } from './run.routes.ts';
import { stateRoutes } from './state.routes.ts';
import type { WorkerContext } from './worker.context.ts';

export interface Worker {
  app: Hono;
  /** Aborts live runs and releases the runtimes; the app answers nothing useful afterwards. */
  close(): Promise<void>;
}

function createRuntime(id: Runtime, config: Config['worker']): WorkerRuntime {
  // runtime_a (Claude Agent SDK) and runtime_b (Codex SDK) are not wired in this build yet.
  return id === 'general' ? createGeneralRuntime(config) : createUnavailableRuntime(id);
}

/**
 * The agent-worker (sidecar) in inbound mode: `GET /health(z)`, `POST /run` (NDJSON RunEvents) and
 * `GET/POST /state/{sessionId}`, serving the runtimes MODE names (`all` serves every runtime, dispatched by
 * profile.runtime). Mounted by the app for the worker role; tests serve `app` on a real port.
 */
export function createWorker(deps: { config: Config['worker'] }): Worker {
  const { config } = deps;
  const served = config.mode === 'all' ? RUNTIMES : [config.mode];
  const ctx: WorkerContext = {
    mode: config.mode,
    instanceId: `wrk_${randomId(16)}`,
    startedAt: new Date(),
    inflight: 0,
    runtimes: new Map(served.map((id) => [id, createRuntime(id, config)])),
    live: new Set(),
  };

  const app = new Hono();
  useJsonErrors(app);
  app.use('*', async (c, next) => {
    c.header(WORKER_INSTANCE_HEADER, ctx.instanceId);
    await next();
  });
  app.route('/', healthRoutes(ctx));
  app.route('/', runRoutes(ctx));
  app.route('/', stateRoutes(ctx));

  return {
    app,
    async close() {
      for (const abort of ctx.live) abort.abort(new Error('worker shutting down'));
      await Promise.allSettled([...ctx.runtimes.values()].map((r) => r.close()));
    },
  };
}
