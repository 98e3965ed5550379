import { doc } from '../../../shared/route-doc.ts';
import { Hono } from 'hono';
import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { withTenant } from '../../../db/index.ts';
import { readJson } from '../../../shared/http.ts';
import type { ProfileSpec } from '../../../contracts/runner.wire.ts';
import { SandboxLimitsOverrideSchema } from '../../../contracts/sandbox-limits.ts';
import type { IdentityEnv } from '../identity/index.ts';
import type { Guards } from '../identity/guards.ts';
import type { Broadcaster } from '../runners/broadcast.ts';
import type { SandboxLimitsService } from './sandbox-limits.service.ts';
import { tenantProfileSpecs } from './tenant-limits.repo.ts';

/**
 * `GET` and `PUT /api/tenants/{id}/limits`: the operator's ceilings for one tenant, guarded as the other tenant routes
 * are (outside the operator tenant: 404; changes need admin). After a change the tenant's profiles go to the runners
 * again, held to the new ceilings, so the sessions created after it get them.
 */
export function tenantLimitsRoutes(deps: { db: Kysely<DB>; limits: SandboxLimitsService; broadcaster: Broadcaster; guards: Guards }): Hono<IdentityEnv> {
  return new Hono<IdentityEnv>()
    .use('*', deps.guards.operatorOnly())
    .use('*', deps.guards.requireRole('admin', 'tenant management', { writesOnly: true }))
    .get('/:id/limits', async (c) => c.json(await deps.limits.getTenantLimits(c.req.param('id'))))
    .put('/:id/limits', doc({ body: SandboxLimitsOverrideSchema }), async (c) => {
      const tenantId = c.req.param('id');
      const view = await deps.limits.setTenantLimits(tenantId, await readJson(c, SandboxLimitsOverrideSchema));
      const profiles = await withTenant(deps.db, tenantId, (tx) => tenantProfileSpecs(tx));
      await deps.broadcaster.send(async (r) => {
        for (const p of profiles) await r.putProfile(tenantId, p as ProfileSpec);
      });
      return c.json(view);
    });
}
