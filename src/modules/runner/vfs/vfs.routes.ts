import { Hono } from 'hono';
import { TENANT_HEADER } from '../../../contracts/runner.ts';
import { notFound } from '../../../shared/errors.ts';
import type { RunnerEnv } from '../runner.context.ts';
import type { SessionStore } from '../sessions/sessions.store.ts';
import type { VfsManager } from './vfs.manager.ts';

/**
 * `GET /runner/vfs/leases` and `GET /runner/sessions/{id}/vfs`. The list is scoped by the forwarded tenant header;
 * a request without one is the conductor's internal fan-out and sees every lease (seed 000, "Runner wire API").
 */
export function vfsRoutes(deps: { vfs: VfsManager; sessions: SessionStore }): Hono<RunnerEnv> {
  const app = new Hono<RunnerEnv>();
  app.get('/runner/vfs/leases', (c) => c.json(deps.vfs.leases(c.req.header(TENANT_HEADER) ? c.get('tenant') : undefined)));
  app.get('/runner/sessions/:id/vfs', (c) => {
    const id = c.req.param('id');
    const lease = deps.sessions.find(c.get('tenant'), id) ? deps.vfs.lease(id) : undefined;
    if (!lease) throw notFound('no vfs session');
    return c.json(lease);
  });
  return app;
}
