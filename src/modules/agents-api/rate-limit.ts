import type { MiddlewareHandler } from 'hono';
import { AppError } from '../../shared/errors.ts';

/**
 * Fixed one-minute windows per API key (300) and per organisation (600), in memory per conductor process. A refusal
 * is 429 `rate_limit_exceeded` with `Retry-After` and the message `Rate limit reached. Retry after N seconds.`
 */
export interface RateLimits {
  perKey: number;
  perOrg: number;
  windowMs: number;
}

export const DEFAULT_LIMITS: RateLimits = { perKey: 300, perOrg: 600, windowMs: 60_000 };

export function createRateLimiter(limits: RateLimits = DEFAULT_LIMITS, now: () => number = Date.now) {
  const windows = new Map<string, { start: number; count: number }>();
  let lastSweep = now();

  function hit(key: string, max: number): number | undefined {
    const t = now();
    if (t - lastSweep > limits.windowMs) {
      for (const [k, w] of windows) if (t - w.start >= limits.windowMs) windows.delete(k);
      lastSweep = t;
    }
    let w = windows.get(key);
    if (!w || t - w.start >= limits.windowMs) windows.set(key, (w = { start: t, count: 0 }));
    if (w.count >= max) return Math.max(1, Math.ceil((w.start + limits.windowMs - t) / 1000));
    w.count++;
    return undefined;
  }

  /** Counts one request; returns the seconds to wait when a limit is reached. */
  return function check(principal: { tenantId: string; keyId: string | null; subject: string | null }): number | undefined {
    const org = hit(`org:${principal.tenantId}`, limits.perOrg);
    if (org !== undefined) return org;
    return hit(`key:${principal.keyId ?? principal.subject ?? principal.tenantId}`, limits.perKey);
  };
}

export function rateLimitError(seconds: number): AppError {
  return new AppError(429, `Rate limit reached. Retry after ${seconds} seconds.`, { code: 'rate_limit_exceeded', headers: { 'Retry-After': String(seconds) } });
}

export function rateLimit(check: ReturnType<typeof createRateLimiter>, principalOf: (c: Parameters<MiddlewareHandler>[0]) => { tenantId: string; keyId: string | null; subject: string | null }): MiddlewareHandler {
  return async (c, next) => {
    const wait = check(principalOf(c));
    if (wait !== undefined) throw rateLimitError(wait);
    await next();
  };
}
