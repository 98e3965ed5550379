import { doc, type Documents } from '../../../shared/route-doc.ts';
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
import type { TenantLimitsView } from './sandbox-limits.service.ts';
import * as v from 'valibot';

const Limits = v.object({ memoryMiB: v.number(), cpus: v.number(), pids: v.number(), wallSeconds: v.number(), cpuSeconds: v.number(), fileMiB: v.number(), diskMiB: v.number(), outputBytes: v.number(), openFiles: v.number() });
/** The answer of the tenant limits routes: the tenant's ceilings as set, and what its sessions are held to with them. */
export const TenantLimitsAnswer = v.object({
  tenantId: v.string(),
  limits: v.pipe(v.record(v.string(), v.number()), v.description('The tenant’s own ceilings, as set')),
  ceilings: v.pipe(Limits, v.description('The operator’s ceilings lowered by the tenant’s: no session of the tenant gets more')),
  defaults: v.pipe(Limits, v.description('What a session gets for a limit its profile does not set')),
});
const OPERATOR = ' Operator only: callers outside the operator tenant get 404; changes need the admin role.';

/**
 * `GET` and `PUT /api/tenants/{id}/limits`: the operator's ceilings for one tenant, guarded as the other tenant routes
 * are (outside the operator tenant: 404; changes need admin). After a change the tenant's profiles go to the runners
 * again, held to the new ceilings, so the sessions created after it get them.
 */
export function tenantLimitsRoutes(deps: { db: Kysely<DB>; limits: SandboxLimitsService; broadcaster: Broadcaster; guards: Guards }): Hono<IdentityEnv> {
  return new Hono<IdentityEnv>()
    .use('*', deps.guards.operatorOnly())
    .use('*', deps.guards.requireRole('admin', 'tenant management', { writesOnly: true }))
    .get('/:id/limits', doc({ summary: 'Get a tenant’s sandbox limits', description: 'The ceilings set for the tenant’s sandboxes (memory, CPU, processes, time, disk, output), the ceilings in force and the defaults.' + OPERATOR, response: TenantLimitsAnswer }), async (c) => c.json(await deps.limits.getTenantLimits(c.req.param('id'))))
    .put('/:id/limits', doc({ summary: 'Set a tenant’s sandbox limits', description: 'Replaces the tenant’s ceilings (each at most the operator’s, 400 above). Sessions created after it get them; the tenant’s profiles are sent to the runners again.' + OPERATOR, body: SandboxLimitsOverrideSchema, response: TenantLimitsAnswer }), async (c) => {
      const tenantId = c.req.param('id');
      const view = await deps.limits.setTenantLimits(tenantId, await readJson(c, SandboxLimitsOverrideSchema));
      const profiles = await withTenant(deps.db, tenantId, (tx) => tenantProfileSpecs(tx));
      await deps.broadcaster.send(async (r) => {
        for (const p of profiles) await r.putProfile(tenantId, p as ProfileSpec);
      });
      return c.json(view);
    });
}

/** The answers' types fit what the reference documents (compile-time only). */
export type DocumentedTenantLimits = Documents<typeof TenantLimitsAnswer, TenantLimitsView>;
