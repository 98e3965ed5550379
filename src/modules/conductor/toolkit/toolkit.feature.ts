import { Hono } from 'hono';
import type { Feature } from '../feature.ts';
import type { IdentityEnv } from '../identity/index.ts';
import { capabilityBundleRoutes } from './toolkit.routes.ts';

/** `/api/capability-bundles`. */
export const toolkitFeature: Feature = () => ({ api: new Hono<IdentityEnv>().route('/capability-bundles', capabilityBundleRoutes()) });
