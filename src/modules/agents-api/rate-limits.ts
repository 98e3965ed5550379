import type { LimitRule } from '../conductor/index.ts';
import type { AgentsEnv } from './context.ts';

/**
 * The /v1 limits, taken by the shared limiter (counted in PostgreSQL, so they hold across conductor replicas): per
 * organisation (600/min) and per API key (300/min) by default, `SVC_RATE_LIMIT_PER_ORG` / `SVC_RATE_LIMIT_PER_KEY`.
 * A refusal is 429 `rate_limit_exceeded` with `Retry-After` and `Rate limit reached. Retry after N seconds.`
 */
export interface RateLimits {
  perKey: number;
  perOrg: number;
  windowMs: number;
}

export const DEFAULT_LIMITS: RateLimits = { perKey: 300, perOrg: 600, windowMs: 60_000 };

export function v1LimitRules(limits: RateLimits = DEFAULT_LIMITS): LimitRule<AgentsEnv>[] {
  return [
    { scope: 'v1-org', limit: limits.perOrg, periodMs: limits.windowMs, key: (c) => c.get('principal').tenantId },
    {
      scope: 'v1-key',
      limit: limits.perKey,
      periodMs: limits.windowMs,
      // a JWT principal has no key: its subject is counted instead, within its organisation
      key: (c) => {
        const p = c.get('principal');
        return `${p.tenantId}:${p.keyId ?? p.subject ?? ''}`;
      },
    },
  ];
}
