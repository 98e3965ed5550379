import { Hono } from 'hono';
import type { Config } from '../../config/config.ts';
import { RUNTIMES, WORKER_INSTANCE_HEADER, type Runtime } from '../../contracts/worker.ts';
import { randomId } from '../../shared/ids.ts';
import { useJsonErrors } from '../../shared/http.ts';
import type { WorkerRuntime } from './runtime.ts';
import { createGeneralRuntime } from './runtimes/general/index.ts';
import { createRuntimeA, type ClaudeSdk } from './runtimes/runtime-a/index.ts';
import { createRuntimeB, type CodexSdk } from './runtimes/runtime-b/index.ts';
import type { HostEnv } from './runtimes/sdk/child-env.ts';
import type { SdkLoader } from './runtimes/sdk/loader.ts';
import { healthRoutes } from './health.routes.ts';
import { runRoutes } from './run.routes.ts';
import { stateRoutes } from './state.routes.ts';
import type { WorkerContext } from './worker.context.ts';
import { createDirectWorkerClient } from './worker.direct.ts';
import type { WorkerClient } from '../../contracts/worker.client.ts';

export interface Worker {
  app: Hono;
  /**
   * The worker contract's direct transport (worker.direct.ts), for a runner in this process: the same runs and state
   * as `app`'s routes, as function calls. `baseUrl` is what the client reports as its address.
   */
  direct(baseUrl: string): WorkerClient;
  /** Aborts live runs and releases the runtimes; the app answers nothing useful afterwards. */
  close(): Promise<void>;
}

export interface WorkerDeps {
  config: Config['worker'];
  /**
   * The worker process's environment, read only for what SDK child processes inherit: PATH and the names in
   * `config.childEnvAllow`. Defaults to `config.hostEnv`, which loadConfig read from the process environment.
   */
  hostEnv?: HostEnv;
  /** SDK importers for runtime_a and runtime_b; tests replace them to exercise a missing optional package. */
  sdkLoaders?: { claude?: SdkLoader<ClaudeSdk>; codex?: SdkLoader<CodexSdk> };
}

function createRuntime(id: Runtime, deps: WorkerDeps): WorkerRuntime {
  const hostEnv = deps.hostEnv ?? deps.config.hostEnv;
  if (id === 'runtime_a') return createRuntimeA(deps.config, { hostEnv, load: deps.sdkLoaders?.claude });
  if (id === 'runtime_b') return createRuntimeB(deps.config, { hostEnv, load: deps.sdkLoaders?.codex });
  return createGeneralRuntime(deps.config);
}

/** The runtimes a MODE serves (`all`: every runtime, dispatched by profile.runtime). */
export function createRuntimes(deps: WorkerDeps): Map<Runtime, WorkerRuntime> {
  const served = deps.config.mode === 'all' ? RUNTIMES : [deps.config.mode];
  return new Map(served.map((id) => [id, createRuntime(id, deps)]));
}

/**
 * The agent-worker (sidecar) in inbound mode: `GET /health(z)`, `POST /run` (NDJSON RunEvents) and
 * `GET/POST /state/{sessionId}`, serving the runtimes MODE names (`all` serves every runtime, dispatched by
 * profile.runtime). Mounted by the app for the worker role; tests serve `app` on a real port.
 */
export function createWorker(deps: WorkerDeps): Worker {
  const { config } = deps;
  const ctx: WorkerContext = {
    mode: config.mode,
    instanceId: `wrk_${randomId(16)}`,
    startedAt: new Date(),
    inflight: 0,
    runtimes: createRuntimes(deps),
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
    direct: (baseUrl) => createDirectWorkerClient(ctx, baseUrl),
    async close() {
      for (const abort of ctx.live) abort.abort(new Error('worker shutting down'));
      await Promise.allSettled([...ctx.runtimes.values()].map((r) => r.close()));
    },
  };
}
