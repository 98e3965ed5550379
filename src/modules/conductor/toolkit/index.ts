/** The platform toolkit as the conductor shows it: capability bundles for profile `tools`. */
export { toolkitFeature } from './toolkit.feature.ts';
export { capabilityBundleRoutes } from './toolkit.routes.ts';
