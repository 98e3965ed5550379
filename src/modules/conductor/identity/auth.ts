import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import type { Kysely } from 'kysely';
import type * as jose from 'jose';
import type { DB } from '../../../db/index.ts';
import { withTenant } from '../../../db/index.ts';
import { unauthorized } from '../../../shared/errors.ts';
import { hashKey, KEY_PATTERN } from './keys.ts';
import type { Role } from './roles.ts';
import { ROLES } from './roles.ts';
import { lookupKey, tenantStatus, type KeyLookupRow } from './tenants.repo.ts';

/** jose is loaded with the first token to sign or verify (API keys, the common case, never need it), not at boot. */
export const loadJose = (): Promise<typeof import('jose')> => import('jose');

/** Who a request acts as. The tenant always comes from the credential, never from a client header. */
export interface Principal {
  tenantId: string;
  tenantName: string | null;
  role: Role;
  authKind: 'api_key' | 'run_token' | 'session';
  keyId: string | null;
  subject: string | null;
}

export interface AuthDeps {
  db: Kysely<DB>;
  pepper: string;
  /** API keys looked up recently (absent: every request looks its key up). */
  keyCache?: KeyCache;
  runTokenKey: Uint8Array;
  jwt?: { issuer: string; audience?: string; jwks: jose.JWTVerifyGetKey };
}

const RUN_TOKEN_ISSUER = 'svc-conductor';

/**
 * The API keys this process looked up in the last KEY_CACHE_MS, by hash: a run's POST and its stream (and a client's
 * next request) authenticate without a database round trip each. What that costs: a key revoked, or a tenant deleted
 * or renamed, through another replica is honoured here up to KEY_CACHE_MS later; through this process, at once
 * (`clear()` on revoke, tenant delete and update). Only keys found are kept (an unknown key is looked up every time),
 * and expiry is checked on every use.
 */
export const KEY_CACHE_MS = 2_000;
const KEY_CACHE_MAX = 10_000;

export interface KeyCache {
  get(hash: string): KeyLookupRow | undefined;
  set(hash: string, row: KeyLookupRow): void;
  clear(): void;
}

export function createKeyCache(now: () => number = () => performance.now(), ttlMs = KEY_CACHE_MS): KeyCache {
  const rows = new Map<string, { row: KeyLookupRow; at: number }>();
  return {
    get(hash) {
      const hit = rows.get(hash);
      if (hit && now() - hit.at < ttlMs) return hit.row;
      if (hit) rows.delete(hash);
      return undefined;
    },
    set(hash, row) {
      if (rows.size >= KEY_CACHE_MAX) rows.clear(); // many distinct keys within seconds: start over
      rows.set(hash, { row, at: now() });
    },
    clear: () => rows.clear(),
  };
}


export async function authenticate(deps: AuthDeps, header: string | undefined): Promise<Principal> {
  const m = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  if (!m) throw unauthorized('missing bearer credential');
  const token = m[1];
  if (token.startsWith('ao_')) return verifyApiKey(deps, token);
  return verifyJwt(deps, token);
}

async function verifyApiKey(deps: AuthDeps, token: string): Promise<Principal> {
  if (!KEY_PATTERN.test(token)) throw unauthorized('invalid API key');
  const hash = hashKey(deps.pepper, token);
  let key = deps.keyCache?.get(hash);
  if (!key) {
    key = await lookupKey(deps.db, hash);
    if (!key) throw unauthorized('invalid API key');
    deps.keyCache?.set(hash, key);
  }
  if (key.revoked_at) throw unauthorized('API key revoked');
  if (key.expires_at && new Date(key.expires_at).getTime() <= Date.now()) throw unauthorized('API key expired');
  if (key.tenant_deleted_at) throw unauthorized('tenant deleted');
  return { tenantId: key.tenant_id, tenantName: key.tenant_name, role: key.role, authKind: 'api_key', keyId: key.id, subject: null };
}

async function verifyJwt(deps: AuthDeps, token: string): Promise<Principal> {
  const jose = await loadJose();
  let header: jose.ProtectedHeaderParameters;
  try {
    header = jose.decodeProtectedHeader(token);
  } catch {
    throw unauthorized('invalid bearer credential');
  }
  if (header.alg === 'HS256') return verifyRunToken(deps, token);
  if (!deps.jwt) throw unauthorized('interactive sessions are not configured (set SVC_JWT_ISSUER and SVC_JWT_JWKS_URL)');
  let payload: jose.JWTPayload;
  try {
    ({ payload } = await jose.jwtVerify(token, deps.jwt.jwks, { issuer: deps.jwt.issuer, audience: deps.jwt.audience }));
  } catch (err) {
    throw unauthorized(`invalid session token: ${err instanceof Error ? err.message : 'verification failed'}`);
  }
  const tenantId = typeof payload.tenant_id === 'string' ? payload.tenant_id : typeof payload.org_id === 'string' ? payload.org_id : undefined;
  if (!tenantId) throw unauthorized('session token has no tenant_id claim');
  const role = (ROLES as readonly string[]).includes(String(payload.role)) ? (payload.role as Role) : 'member';
  const tenantName = await assertTenantActive(deps.db, tenantId);
  return { tenantId, tenantName, role, authKind: 'session', keyId: null, subject: payload.sub ?? null };
}

async function verifyRunToken(deps: AuthDeps, token: string): Promise<Principal> {
  const jose = await loadJose();
  let payload: jose.JWTPayload;
  try {
    ({ payload } = await jose.jwtVerify(token, deps.runTokenKey, { issuer: RUN_TOKEN_ISSUER, algorithms: ['HS256'] }));
  } catch {
    throw unauthorized('invalid or expired run token');
  }
  if (typeof payload.tenant_id !== 'string') throw unauthorized('invalid run token');
  const tenantName = await assertTenantActive(deps.db, payload.tenant_id);
  return { tenantId: payload.tenant_id, tenantName, role: 'member', authKind: 'run_token', keyId: null, subject: payload.sub ?? null };
}

async function assertTenantActive(db: Kysely<DB>, tenantId: string): Promise<string> {
  const tenant = await withTenant(db, tenantId, (tx) => tenantStatus(tx, tenantId));
  if (!tenant || tenant.deleted_at) throw unauthorized('unknown or deleted tenant');
  return tenant.name;
}

/**
 * Short-lived run tokens (SVC_RUN_TOKEN_TTL_S, 15 minutes by default) that let a run's tools call back into the
 * conductor as the tenant: an HS256 JWT (RFC 7515/7519, verified with jose in verifyRunToken), signed here with
 * node:crypto, as one is minted per run and jose's Web Crypto signing (a key import and a promise per token) cost
 * about eight times as much. The runner renews a running run's token before it expires (`POST /api/runs/self/token`).
 * `exp` is rounded up to the second (`iat` down): a token lives at least `ttlSeconds`, so a renewal due a third of
 * `exp - iat` after the token arrived comes well before its end, whenever within its second it was minted.
 */
export async function mintRunToken(key: Uint8Array, claims: { tenantId: string; runId: string }, ttlSeconds = 900): Promise<string> {
  let secret = runTokenKeys.get(key);
  if (!secret) runTokenKeys.set(key, (secret = createSecretKey(key)));
  const now = Date.now() / 1000;
  const payload = { tenant_id: claims.tenantId, run_id: claims.runId, iss: RUN_TOKEN_ISSUER, sub: `run:${claims.runId}`, iat: Math.floor(now), exp: Math.ceil(now + ttlSeconds) };
  const input = `${RUN_TOKEN_HEADER}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

const RUN_TOKEN_HEADER = Buffer.from(JSON.stringify({ alg: 'HS256' })).toString('base64url');
const runTokenKeys = new WeakMap<Uint8Array, KeyObject>();
