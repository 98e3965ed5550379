import type { Handler } from 'hono';
import { merge, type ReadyReport } from '../shared/readiness.ts';

/**
 * `GET /readyz`: 200 `{status: "ready", checks}` when every mounted module's dependencies answer, else 503
 * `{status: "not ready", error, checks}` with `error` naming each failure. While the server drains for a stop it
 * answers 503 at once, so a load balancer stops sending before connections close. `/healthz` stays liveness only.
 * `warnings` (present only when there are some) lists what passing checks found wanting, `<check>: <warning>`; they
 * never make the instance unready.
 */
export function readyz(modules: ReadonlyArray<() => Promise<ReadyReport>>, stopping: () => boolean): Handler {
  return async (c) => {
    const report = stopping()
      ? { ready: false, checks: [], problems: ['stopping: the server is draining'] }
      : merge(await Promise.all(modules.map((m) => m())));
    const headers = { 'Cache-Control': 'no-store' };
    const warnings = report.checks.flatMap((check) => (check.warning ? [`${check.name}: ${check.warning}`] : []));
    const extra = warnings.length ? { warnings } : {};
    if (report.ready) return c.json({ status: 'ready', checks: report.checks, ...extra }, 200, headers);
    return c.json({ status: 'not ready', error: report.problems.join('; '), checks: report.checks, ...extra }, 503, headers);
  };
}
