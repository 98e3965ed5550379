/** The platform toolkit as the conductor shows it: capability bundles for profile `tools`. */
export { capabilityBundleRoutes } from './toolkit.routes.ts';
