import { Hono } from 'hono';
import type { WorkerHealth } from '../../contracts/worker.ts';
import type { WorkerContext } from './worker.context.ts';

/** `GET /health` and `/healthz`: liveness plus the process facts the runner's topology view shows per instance. */
export function healthRoutes(ctx: WorkerContext): Hono {
  const app = new Hono();
  const handler = (c: { json(body: WorkerHealth): Response }) => c.json(healthOf(ctx));
  app.get('/health', (c) => handler(c));
  app.get('/healthz', (c) => handler(c));
  return app;
}

/** What `GET /health` answers (and the direct transport's `health()` returns). */
export function healthOf(ctx: WorkerContext): WorkerHealth {
  const mem = process.memoryUsage();
  const cpu = process.cpuUsage();
  return {
    ok: true,
    runtime: ctx.mode,
    instanceId: ctx.instanceId,
    pid: process.pid,
    startedAt: ctx.startedAt.toISOString(),
    uptimeSeconds: Math.floor((Date.now() - ctx.startedAt.getTime()) / 1000),
    inflight: ctx.inflight,
    nodeVersion: process.version,
    memory: { rssBytes: mem.rss, heapUsedBytes: mem.heapUsed, heapTotalBytes: mem.heapTotal, externalBytes: mem.external },
    cpu: { userMicros: cpu.user, systemMicros: cpu.system },
  };
}
