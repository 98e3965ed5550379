import { Hono } from 'hono';
import * as v from 'valibot';
import { TENANT_HEADER } from '../../../contracts/runner.ts';
import { notFound } from '../../../shared/errors.ts';
import { readJson } from '../../../shared/http.ts';
import type { RunnerEnv } from '../runner.context.ts';
import type { SandboxWorkers } from './sandbox/sandbox-workers.ts';

const InvalidateRequest = v.object({
  provider: v.pipe(v.string(), v.minLength(1, 'a non-empty string')),
  sandboxId: v.pipe(v.string(), v.minLength(1, 'a non-empty string')),
});

/**
 * Sandbox worker leases (seed 000, "Sandbox worker lease"), their state read live from the substrate, and the
 * invalidation a substrate's event (a hosted sandbox reaped, a pod evicted) triggers. A call without a tenant header
 * is internal fan-out and sees every lease; `no sandbox worker` covers a static profile, an unknown session, another
 * tenant's session and a session before its first run alike.
 */
export function leaseRoutes(deps: { workers: SandboxWorkers }): Hono<RunnerEnv> {
  const tenantOf = (header: string | undefined, tenant: string) => (header === undefined || header === '' ? undefined : tenant);
  return new Hono<RunnerEnv>()
    .get('/runner/worker/leases', (c) => c.json(deps.workers.leases(tenantOf(c.req.header(TENANT_HEADER), c.get('tenant')))))
    .get('/runner/sessions/:id/worker', (c) => {
      const lease = deps.workers.lease(c.req.param('id'), c.get('tenant'));
      if (!lease) throw notFound('no sandbox worker');
      return c.json(lease);
    })
    .post('/runner/sandbox-events/invalidate', async (c) => {
      const { provider, sandboxId } = await readJson(c, InvalidateRequest);
      return c.json({ invalidated: await deps.workers.invalidate(provider, sandboxId) });
    });
}
