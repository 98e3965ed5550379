import { Hono } from 'hono';
import { WorkerRunRequest, WORKER_INFLIGHT_HEADER } from '../../contracts/worker.ts';
import { readJson } from '../../shared/http.ts';
import { ndjsonStream } from '../../shared/ndjson.ts';
import { extractTrace } from '../../shared/tracing/index.ts';
import { startWorkerRun } from './run.service.ts';
import type { WorkerContext } from './worker.context.ts';

/**
 * `POST /run`: validate the body, pick the runtime by profile.runtime, stream its events as NDJSON (run.service.ts).
 * The stream always ends with exactly one terminal event, and a client that hangs up aborts the model call.
 */
export function runRoutes(ctx: WorkerContext): Hono {
  const app = new Hono();
  app.post('/run', async (c) => {
    const body = await readJson(c, WorkerRunRequest);
    const run = startWorkerRun(ctx, body, extractTrace(c.req.raw.headers), c.req.raw.signal);
    return c.body(ndjsonStream(run.events, run.cancel), 200, {
      'content-type': 'application/x-ndjson',
      'cache-control': 'no-store',
      [WORKER_INFLIGHT_HEADER]: String(ctx.inflight),
    });
  });
  return app;
}
