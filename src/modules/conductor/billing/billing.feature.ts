import { Hono } from 'hono';
import type { Feature } from '../feature.ts';
import type { IdentityEnv } from '../identity/index.ts';
import { billingRoutes } from './billing.routes.ts';

/** `/api/billing/…` and `/api/spend-cap`. */
export const billingFeature: Feature = ({ db, config, guards }) => ({
  api: new Hono<IdentityEnv>().route('/', billingRoutes({ db, defaults: config.cli, guards })),
});
