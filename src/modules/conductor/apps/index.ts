/** Connected apps: third-party accounts linked by a tenant, and the providers the operator configured. */
export { appsFeature } from './apps.feature.ts';
export { KNOWN_PROVIDERS } from './apps.routes.ts';
export { insertConnection, listConnections, type Connection } from './apps.repo.ts';
