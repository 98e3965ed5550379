export { authenticate, mintRunToken, type Principal, type AuthDeps } from './auth.ts';
export { requireAuth, type IdentityEnv } from './middleware.ts';
export { identityRoutes } from './identity.routes.ts';
export { tenantRoutes } from './tenants.routes.ts';
export { bootstrapIdentity } from './bootstrap.ts';
export { insertKey, issueKey, listKeys, revokeKey, type ApiKeyView, type KeyDeps } from './keys.service.ts';
export { atLeast, ROLES, type Role } from './roles.ts';
export { hashKey, KEY_PATTERN } from './keys.ts';
