import { Hono } from 'hono';
import type { Feature } from '../feature.ts';
import type { IdentityEnv } from '../identity/index.ts';
import { tenantLimitsRoutes } from './sandbox-limits.routes.ts';

/** `/api/tenants/{id}/limits` (the service itself is built in core.ts: profiles, the fleet and /v1 use it). */
export const sandboxLimitsFeature: Feature = ({ db, sandboxLimits, broadcaster, guards }) => ({
  api: new Hono<IdentityEnv>().route('/tenants', tenantLimitsRoutes({ db, limits: sandboxLimits, broadcaster, guards })),
});
