import type { Feature } from '../feature.ts';
import { kitPublicRoutes, kitRoutes } from './kits.routes.ts';

/** Kits: `/api/templates/*` and `/api/kits/*` signed in; `/api/public/templates/*` and `/api/public/kits/*` without a credential. */
export const kitsFeature: Feature = ({ db, broadcaster, fleet, guards, limiter, config, sandboxLimits }) => {
  const deps = { db, broadcaster, fleet, privateAddresses: config.privateAddresses, sandboxLimits };
  return { api: kitRoutes(deps, guards), public: kitPublicRoutes(deps, limiter) };
};
