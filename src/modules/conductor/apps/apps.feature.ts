import { Hono } from 'hono';
import type { Feature } from '../feature.ts';
import type { IdentityEnv } from '../identity/index.ts';
import { connectedAppRoutes } from './apps.routes.ts';

/** `/api/connected-apps…`. */
export const appsFeature: Feature = ({ db, config }) => ({
  api: new Hono<IdentityEnv>().route('/connected-apps', connectedAppRoutes({ db, configured: config.cli.connectedApps })),
});
