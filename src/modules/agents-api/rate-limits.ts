import { DEFAULT_PRINCIPAL_LIMITS, principalLimitRules, type LimitRule, type PrincipalLimits } from '../conductor/index.ts';
import type { AgentsEnv } from './context.ts';

/**
 * The /v1 limits, taken by the shared limiter (counted in PostgreSQL, so they hold across conductor replicas): per
 * organisation (600/min) and per API key (300/min) by default, `SVC_RATE_LIMIT_PER_ORG` / `SVC_RATE_LIMIT_PER_KEY`.
 * The extension routes under `/api` take the same counters (the conductor applies them there).
 * A refusal is 429 `rate_limit_exceeded` with `Retry-After` and `Rate limit reached. Retry after N seconds.`
 */
export type RateLimits = PrincipalLimits;

export const DEFAULT_LIMITS: RateLimits = DEFAULT_PRINCIPAL_LIMITS;

export function v1LimitRules(limits: RateLimits = DEFAULT_LIMITS): LimitRule<AgentsEnv>[] {
  return principalLimitRules<AgentsEnv>(limits);
}
