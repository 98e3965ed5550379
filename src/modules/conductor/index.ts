/** The conductor module's door: the factory, the feature contract, and what the agents API may use. */
export { createConductor, type Conductor } from './conductor.ts';
export type { ConductorDeps } from './core.ts';
export type { Feature, FeatureDeps, FeatureParts } from './feature.ts';
export { FEATURES } from './features.ts';
export type { ConductorServices, RunsService, SessionsService, KeysService } from './services.ts';
export { hasRole, operatorOnly, readOnlyViewers, requireRole, type ApiKeyView, type IdentityEnv, type Principal, type Role } from './identity/index.ts';
export { RunBody } from './runs/runs.service.ts';
export { mcpUrlProblem } from './runs/mcp-address.ts';
export { NoCommandSandbox } from './runners/sandbox-check.ts';
export type { UsageWindow } from './runs/usage.repo.ts';
export type { StoredEvent } from './runs/hub.ts';
export { chargeCredit, getWallet, getSpendCap, priceTokens, ratesOf, type Wallet, type SpendCap } from './billing/index.ts';
// The shared rate limiter (counters in PostgreSQL), for /v1, /api and public routes.
export { createLimiter, purgeExpiredLimits, principalLimitRules, DEFAULT_PRINCIPAL_LIMITS, type Limiter, type LimitRule, type PrincipalLimits } from './limits/index.ts';
export type { ProviderKeys, ProviderKeyMeta } from './provider-keys/index.ts';
export type { RunHooks, RunFinished, RunGate, RunGateContext } from './hooks/index.ts';
export type { Jobs } from './jobs/index.ts';
export { jobsSchemaSql } from './jobs/index.ts';
export * as memoryStores from './memory/index.ts';
