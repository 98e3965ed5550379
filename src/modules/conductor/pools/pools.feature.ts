import { Hono } from 'hono';
import type { Feature } from '../feature.ts';
import type { IdentityEnv } from '../identity/index.ts';
import { podRoutes } from './pods.routes.ts';
import { poolRoutes } from './pools.routes.ts';

/** `/api/pools` (variant A) and `/api/pods` (variant B), one resource. */
export const poolsFeature: Feature = ({ db, broadcaster }) => ({
  api: new Hono<IdentityEnv>().route('/pools', poolRoutes({ db, broadcaster })).route('/pods', podRoutes({ db, broadcaster })),
});
