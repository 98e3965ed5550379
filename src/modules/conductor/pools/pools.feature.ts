import { Hono } from 'hono';
import type { Feature } from '../feature.ts';
import type { IdentityEnv } from '../identity/index.ts';
import { poolRoutes } from './pools.routes.ts';

/** `/api/pools`. */
export const poolsFeature: Feature = ({ db, broadcaster }) => ({
  api: new Hono<IdentityEnv>().route('/pools', poolRoutes({ db, broadcaster })),
});
