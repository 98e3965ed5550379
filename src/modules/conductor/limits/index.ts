/** The shared rate limiter's door: counters in PostgreSQL, usable by /v1, /api and public routes. */
export { createLimiter, purgeExpiredLimits, rateLimitError, type Limiter, type LimiterDeps, type LimitResult, type LimitRule } from './limiter.ts';
export { limitsFeature } from './limits.feature.ts';
export { DEFAULT_PRINCIPAL_LIMITS, isExtensionPath, principalLimitRules, type PrincipalLimits } from './principal-limits.ts';
