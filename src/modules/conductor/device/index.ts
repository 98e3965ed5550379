/** Device login for the `svc` CLI: code issue and polling under /api/device; approval lives in the dashboard. */
export { deviceFeature, deviceDepsOf } from './device.feature.ts';
export { requestOrigin } from './device.routes.ts';
export { decideUserCode, lookupUserCode, normalizeUserCode, type DeviceDeps } from './device.service.ts';
