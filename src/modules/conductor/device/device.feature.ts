import { Hono } from 'hono';
import type { Feature, FeatureDeps } from '../feature.ts';
import { deviceApiRoutes } from './device.routes.ts';
import type { DeviceDeps } from './device.service.ts';

/** What the device-login service runs on (the dashboard's approval page uses the same). */
export function deviceDepsOf(deps: FeatureDeps): DeviceDeps {
  return { db: deps.db, keyDeps: deps.keys, ttlMs: deps.config.cli.deviceCodeTtlMs };
}

/** `POST /api/device/code` and `/api/device/token`: public (the CLI has no key yet), mounted before the authenticated `/api`. */
export const deviceFeature: Feature = (deps) => ({ public: new Hono().route('/api/device', deviceApiRoutes(deviceDepsOf(deps))) });
