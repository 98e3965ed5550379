import { Hono } from 'hono';
import type { Feature } from '../feature.ts';
import type { IdentityEnv } from '../identity/index.ts';
import { profileRoutes } from './profiles.routes.ts';

/** `/api/profiles`. */
export const profilesFeature: Feature = ({ db, fleet, broadcaster, config, sandboxLimits }) => ({
  api: new Hono<IdentityEnv>().route('/profiles', profileRoutes({ db, fleet, broadcaster, privateAddresses: config.privateAddresses, sandboxLimits })),
});
