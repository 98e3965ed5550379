import type * as jose from 'jose';
import { describeError } from '../../../shared/errors.ts';
import { loadJose } from './auth.ts';

/**
 * JWKS documents by URL, for verifying JWTs: the operator's identity provider (SVC_JWT_JWKS_URL) and each published
 * agent's `jwksUrl`. Anyone can send a JWT-shaped bearer, so a request must never decide whether the server fetches:
 *
 * - a document is fetched once per URL and kept `maxAgeMs`; concurrent requests share one fetch;
 * - a token whose key id the document lacks refetches it at most once per `cooldownMs` (a rotated key still arrives);
 * - a failed fetch (unreachable, refused by the address policy, not 200, not a key set) is remembered: for
 *   `backoffMs`, doubled per consecutive failure up to `maxBackoffMs`, every request fails with that error without a
 *   fetch. Keys already held are kept meanwhile (an identity provider's outage does not sign everyone out);
 * - at most `maxUrls` documents are kept, the least recently used dropped first.
 *
 * Keys are matched by jose's local key set (`createLocalJWKSet`): the same selection rules as its remote one.
 */
export interface JwksCacheOptions {
  /** How documents are fetched: the guarded fetcher for tenants' URLs. */
  fetch: (url: string, init: RequestInit) => Promise<Response>;
  timeoutMs?: number;
  maxAgeMs?: number;
  cooldownMs?: number;
  backoffMs?: number;
  maxBackoffMs?: number;
  maxUrls?: number;
}

export interface JwksCache {
  /** The key resolver for `jwtVerify` of tokens signed by keys of the document at `url`. */
  keysOf(url: string): jose.JWTVerifyGetKey;
}

interface Entry {
  keys?: jose.JWTVerifyGetKey;
  fetchedAt: number;
  pending?: Promise<void>;
  failure?: { error: Error; until: number; backoffMs: number };
}

export function createJwksCache(opts: JwksCacheOptions): JwksCache {
  const { timeoutMs = 5000, maxAgeMs = 10 * 60_000, cooldownMs = 30_000, backoffMs = 30_000, maxBackoffMs = 10 * 60_000, maxUrls = 1000 } = opts;
  const entries = new Map<string, Entry>();

  function entryOf(url: string): Entry {
    let e = entries.get(url);
    if (e) entries.delete(url); // re-inserted below: the Map's order is the recency order
    else e = { fetchedAt: 0 };
    entries.set(url, e);
    if (entries.size > maxUrls) entries.delete(entries.keys().next().value!);
    return e;
  }

  async function fetchKeys(url: string): Promise<jose.JWTVerifyGetKey> {
    const res = await opts.fetch(url, { headers: { accept: 'application/json, application/jwk-set+json' }, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
    if (res.status !== 200) {
      await res.body?.cancel().catch(() => {});
      throw new Error(`the JWKS document answered HTTP ${res.status}`);
    }
    const doc = await res.json().catch(() => undefined);
    try {
      return (await loadJose()).createLocalJWKSet(doc as jose.JSONWebKeySet);
    } catch (err) {
      throw new Error(`the JWKS document is not a JSON Web Key Set (${describeError(err)})`);
    }
  }

  /** Fetches the document unless a failure's backoff holds; one fetch at a time per URL. */
  function refresh(url: string, e: Entry): Promise<void> {
    if (e.failure && Date.now() < e.failure.until) return Promise.reject(e.failure.error);
    e.pending ??= fetchKeys(url)
      .then(
        (keys) => {
          e.keys = keys;
          e.fetchedAt = Date.now();
          e.failure = undefined;
        },
        (err: unknown) => {
          const error = err instanceof Error ? err : new Error(String(err));
          const wait = e.failure ? Math.min(e.failure.backoffMs * 2, maxBackoffMs) : backoffMs;
          e.failure = { error, until: Date.now() + wait, backoffMs: wait };
          throw error;
        },
      )
      .finally(() => (e.pending = undefined));
    return e.pending;
  }

  return {
    keysOf(url) {
      return async (header, token) => {
        const e = entryOf(url);
        if (!e.keys || Date.now() - e.fetchedAt >= maxAgeMs) {
          // stale keys stay in use while their document cannot be fetched again
          await refresh(url, e).catch((err: unknown) => {
            if (!e.keys) throw err;
          });
        }
        try {
          return await e.keys!(header, token);
        } catch (err) {
          if ((err as { code?: string }).code !== 'ERR_JWKS_NO_MATCHING_KEY' || Date.now() - e.fetchedAt < cooldownMs) throw err;
          await refresh(url, e);
          return e.keys!(header, token);
        }
      };
    },
  };
}
