import { Hono } from 'hono';
import { notFound } from '../../../shared/errors.ts';
import type { RunnerEnv } from '../runner.context.ts';

/**
 * Sandbox worker leases (seed 000, "Sandbox worker lease"). This runner has no sandbox substrate: every session is
 * served by a static sidecar, so there are no leases, and asking for one is `no sandbox worker` (static profile,
 * unknown session or another tenant's session alike).
 */
export function leaseRoutes(): Hono<RunnerEnv> {
  return new Hono<RunnerEnv>()
    .get('/runner/worker/leases', (c) => c.json([]))
    .get('/runner/sessions/:id/worker', () => {
      throw notFound('no sandbox worker');
    });
}
