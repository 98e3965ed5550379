import type { Handler } from 'hono';
import { merge, type ReadyReport } from '../shared/readiness.ts';

/**
 * `GET /readyz`: 200 `{status: "ready", checks}` when every mounted module's dependencies answer, else 503
 * `{status: "not ready", error, checks}` with `error` naming each failure. While the server drains for a stop it
 * answers 503 at once, so a load balancer stops sending before connections close. `/healthz` stays liveness only.
 */
export function readyz(modules: ReadonlyArray<() => Promise<ReadyReport>>, stopping: () => boolean): Handler {
  return async (c) => {
    const report = stopping()
      ? { ready: false, checks: [], problems: ['stopping: the server is draining'] }
      : merge(await Promise.all(modules.map((m) => m())));
    const headers = { 'Cache-Control': 'no-store' };
    if (report.ready) return c.json({ status: 'ready', checks: report.checks }, 200, headers);
    return c.json({ status: 'not ready', error: report.problems.join('; '), checks: report.checks }, 503, headers);
  };
}
