import type { Kysely } from 'kysely';
import * as v from 'valibot';
import type { DB } from '../../../db/index.ts';
import { withTenant } from '../../../db/index.ts';
import { badRequest, forbidden } from '../../../shared/errors.ts';
import { found } from '../../crud/index.ts';
import { prefixedId } from '../../../shared/ids.ts';
import type { Principal } from './auth.ts';
import { hashKey, keyPrefix, mintKeyToken } from './keys.ts';
import type { Role } from './roles.ts';
import { hasRole } from './guards.ts';
import type { KeyCache } from './auth.ts';
import { insertKeyRow, markKeyRevoked, selectKeyOwner, selectKeys } from './keys.repo.ts';

/** Tenant API keys: issue (token shown once), list (members see their own), revoke (immediate, irreversible). */
export interface ApiKeyView {
  id: string;
  tenantId: string;
  name: string;
  role: Role;
  prefix: string;
  createdBy: string | null;
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  status: 'active' | 'revoked' | 'expired';
}

export interface KeyDeps {
  db: Kysely<DB>;
  pepper: string;
  keyEnv: string;
  /** Authentication's key cache (auth.ts), cleared when a key is revoked or a tenant deleted or renamed here. */
  keyCache?: KeyCache;
}

type KeyRow = { id: string; tenant_id: string; name: string; role: Role; key_prefix: string; created_by: string | null; created_at: Date; expires_at: Date | null; revoked_at: Date | null };

function toView(r: KeyRow): ApiKeyView {
  const expired = r.expires_at !== null && new Date(r.expires_at).getTime() <= Date.now();
  return {
    id: r.id,
    tenantId: r.tenant_id,
    name: r.name,
    role: r.role,
    prefix: r.key_prefix,
    createdBy: r.created_by,
    createdAt: new Date(r.created_at).toISOString(),
    expiresAt: r.expires_at ? new Date(r.expires_at).toISOString() : null,
    revokedAt: r.revoked_at ? new Date(r.revoked_at).toISOString() : null,
    status: r.revoked_at ? 'revoked' : expired ? 'expired' : 'active',
  };
}


export async function issueKey(
  deps: KeyDeps,
  principal: Principal,
  input: { name: string; expiresAt?: string | null },
): Promise<ApiKeyView & { token: string }> {
  if (!hasRole(principal, 'member')) throw forbidden('role viewer may not create API keys');
  return insertKey(deps, principal.tenantId, {
    name: input.name,
    role: principal.role,
    createdBy: principal.keyId ?? principal.subject,
    expiresAt: futureExpiry(input.expiresAt),
  });
}

/** The body of POST /api/api-keys and POST /api/tenants/{id}/keys. */
export const IssueKeyBody = v.object({
  name: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(200)),
  expiresAt: v.optional(v.nullable(v.pipe(v.string(), v.isoTimestamp()))),
});

/** An optional expiry, which must lie in the future. */
export function futureExpiry(raw: string | null | undefined): Date | null {
  if (!raw) return null;
  const expiresAt = new Date(raw);
  if (Number.isNaN(expiresAt.getTime())) throw badRequest('expiresAt: expected an ISO 8601 timestamp');
  if (expiresAt.getTime() <= Date.now()) throw badRequest('expiresAt: must be in the future');
  return expiresAt;
}

/** Inserts a key row; used by issueKey and the first-boot bootstrap. `token` may be supplied (SVC_BOOTSTRAP_TOKEN). */
export async function insertKey(
  deps: KeyDeps,
  tenantId: string,
  k: { name: string; role: Role; createdBy: string | null; expiresAt: Date | null; token?: string },
): Promise<ApiKeyView & { token: string }> {
  const token = k.token ?? mintKeyToken(deps.keyEnv);
  const row = await withTenant(deps.db, tenantId, (tx) =>
    insertKeyRow(tx, { id: prefixedId('key'), tenantId, name: k.name, role: k.role, keyHash: hashKey(deps.pepper, token), keyPrefix: keyPrefix(token), createdBy: k.createdBy, expiresAt: k.expiresAt }),
  );
  return { ...toView(row), token };
}

/**
 * Admins and owners see every key of the tenant; members and viewers the keys they minted and the key they use. Who
 * minted a key is its minter's key id, or the subject of a signed-in (JWT) session.
 */
export async function listKeys(deps: KeyDeps, principal: Principal): Promise<ApiKeyView[]> {
  const minter = principal.keyId ?? principal.subject;
  if (!hasRole(principal, 'admin') && minter === null) return [];
  const rows = await withTenant(deps.db, principal.tenantId, (tx) => selectKeys(tx, hasRole(principal, 'admin') ? undefined : { minter, ownKeyId: principal.keyId }));
  return rows.map(toView);
}

export async function revokeKey(deps: KeyDeps, principal: Principal, keyId: string): Promise<void> {
  await withTenant(deps.db, principal.tenantId, async (tx) => {
    const row = found(await selectKeyOwner(tx, keyId), 'unknown API key');
    const own = row.id === principal.keyId || (row.created_by !== null && row.created_by === (principal.keyId ?? principal.subject));
    if (!own && !hasRole(principal, 'admin')) throw forbidden('members may revoke only their own keys');
    if (!row.revoked_at) await markKeyRevoked(tx, keyId);
  });
  deps.keyCache?.clear();
}
