/** Identity: authentication, API keys, tenants (operator), and the role guards every feature uses. */
export { identityFeature } from './identity.feature.ts';
export { authenticate, createKeyCache, KEY_CACHE_MS, loadJose, mintRunToken, type Principal, type AuthDeps, type KeyCache } from './auth.ts';
export { createJwksCache, type JwksCache } from './jwks.ts';
export { requireAuth, type IdentityEnv } from './middleware.ts';
export { createGuards, hasRole, operatorOnly, readOnlyViewers, requireRole, type Guards } from './guards.ts';
export { bootstrapIdentity } from './bootstrap.ts';
export { futureExpiry, insertKey, issueKey, listKeys, revokeKey, type ApiKeyView, type KeyDeps } from './keys.service.ts';
export { ROLES, type Role } from './roles.ts';
export { hashKey, KEY_PATTERN } from './keys.ts';
export { sessionKey } from './keys.repo.ts';
