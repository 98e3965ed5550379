import type { Context, Env, MiddlewareHandler } from 'hono';
import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { AppError } from '../../../shared/errors.ts';
import type { Logger } from '../../../shared/log.ts';
import { deleteExpired, takeHits, type Hit } from './limits.repo.ts';

/**
 * The shared rate limiter: counters live in PostgreSQL, so a limit holds across conductor replicas (N replicas do
 * not admit N × the limit). Fixed windows that open at a key's first request: `limit` requests per `periodMs`.
 * Each request costs one upsert statement for all of its rules (see bench/rate-limit.ts for the measured cost).
 *
 * A refusal throws 429 `rate_limit_exceeded` with `Retry-After` (seconds), which each surface's error mapping
 * turns into its own shape (/v1 the OpenAI error object, /api `{error}`).
 */
export interface LimitRule<E extends Env = Env> {
  /** Names the counter family (`v1-key`, `chat-key`, …); two rules with one scope share counters. */
  scope: string;
  limit: number;
  periodMs: number;
  /** The counter this request takes, or undefined to skip the rule for it. */
  key: (c: Context<E>) => string | undefined;
}

export interface LimitResult {
  allowed: boolean;
  /** Requests left in the window (0 when refused). */
  remaining: number;
  /** Seconds until the window resets. */
  retryAfterSeconds: number;
}

export interface Limiter {
  /** Middleware that takes one hit of every rule that applies, and refuses with 429 once any is over its limit. */
  middleware<E extends Env>(rules: ReadonlyArray<LimitRule<E>>): MiddlewareHandler<E>;
  /** For services: takes one hit of `key` in `scope`. */
  check(scope: string, key: string, limit: number, periodMs: number): Promise<LimitResult>;
  /** Deletes expired windows; returns how many. For a periodic job. */
  purge(): Promise<number>;
}

export interface LimiterDeps {
  db: Kysely<DB>;
  log?: Logger;
}

export function createLimiter(deps: LimiterDeps): Limiter {
  /** One statement for all hits; an unreachable database admits the request (its own routes will fail loudly). */
  async function take(hits: Hit[]): Promise<LimitResult> {
    let counts;
    try {
      counts = await takeHits(deps.db, hits);
    } catch (err) {
      deps.log?.warn('rate limit check failed: request admitted', { error: err instanceof Error ? err.message : String(err) });
      return { allowed: true, remaining: 0, retryAfterSeconds: 0 };
    }
    let result: LimitResult = { allowed: true, remaining: Infinity, retryAfterSeconds: 0 };
    for (const count of counts) {
      const limit = hits.find((h) => h.scope === count.scope && h.key === count.key)!.limit;
      if (count.hits > limit) {
        // the longest wait among the refusing rules is the one that lets the request through
        result = { allowed: false, remaining: 0, retryAfterSeconds: Math.max(result.allowed ? 0 : result.retryAfterSeconds, count.resetSeconds) };
      } else if (result.allowed && limit - count.hits < result.remaining) {
        result = { allowed: true, remaining: limit - count.hits, retryAfterSeconds: count.resetSeconds };
      }
    }
    return result;
  }

  return {
    middleware(rules) {
      return async (c, next) => {
        const hits = new Map<string, Hit>();
        for (const rule of rules) {
          const key = rule.key(c);
          if (key !== undefined) hits.set(`${rule.scope}\u0000${key}`, { scope: rule.scope, key, limit: rule.limit, periodMs: rule.periodMs });
        }
        if (hits.size > 0) {
          const result = await take([...hits.values()]);
          if (!result.allowed) throw rateLimitError(result.retryAfterSeconds);
        }
        await next();
      };
    },
    check: (scope, key, limit, periodMs) => take([{ scope, key, limit, periodMs }]),
    purge: () => purgeExpiredLimits(deps.db),
  };
}

/** Deletes expired rate-limit windows; the job queue's periodic purge calls it. */
export function purgeExpiredLimits(db: Kysely<DB>): Promise<number> {
  return deleteExpired(db);
}

export function rateLimitError(seconds: number): AppError {
  return new AppError(429, `Rate limit reached. Retry after ${seconds} seconds.`, { code: 'rate_limit_exceeded', headers: { 'Retry-After': String(seconds) } });
}
