import { Hono } from 'hono';
import type { Feature } from '../feature.ts';
import { identityRoutes } from './identity.routes.ts';
import type { IdentityEnv } from './middleware.ts';
import { tenantRoutes } from './tenants.routes.ts';

/** `/api/whoami`, `/api/api-keys` and the operator's `/api/tenants`. */
export const identityFeature: Feature = ({ keys, guards }) => ({
  api: new Hono<IdentityEnv>().route('/', identityRoutes(keys)).route('/tenants', tenantRoutes(keys, guards)),
});
