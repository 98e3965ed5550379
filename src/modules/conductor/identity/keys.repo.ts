import type { Tx } from '../../../db/index.ts';
import type { Role } from './roles.ts';

/** SQL of the api_keys table (tenant transactions; the key-lookup transaction for a hash before a tenant is known). */
export const KEY_COLUMNS = ['id', 'tenant_id', 'name', 'role', 'key_prefix', 'created_by', 'created_at', 'expires_at', 'revoked_at'] as const;

export function insertKeyRow(
  tx: Tx,
  k: { id: string; tenantId: string; name: string; role: Role; keyHash: string; keyPrefix: string; createdBy: string | null; expiresAt: Date | null },
) {
  return tx
    .insertInto('api_keys')
    .values({ id: k.id, tenant_id: k.tenantId, name: k.name, role: k.role, key_hash: k.keyHash, key_prefix: k.keyPrefix, created_by: k.createdBy, expires_at: k.expiresAt })
    .returning(KEY_COLUMNS)
    .executeTakeFirstOrThrow();
}

/** Newest first; `mintedBy` narrows to the keys a minter created plus the caller's own key. */
export function selectKeys(tx: Tx, mintedBy?: { minter: string | null; ownKeyId: string | null }) {
  let q = tx.selectFrom('api_keys').select(KEY_COLUMNS).orderBy('created_at', 'desc').orderBy('id');
  if (mintedBy) {
    const { minter, ownKeyId } = mintedBy;
    q = q.where((eb) => eb.or([eb('created_by', '=', minter), ...(ownKeyId !== null ? [eb('id', '=', ownKeyId)] : [])]));
  }
  return q.execute();
}

export function selectKeyOwner(tx: Tx, id: string) {
  return tx.selectFrom('api_keys').select(['id', 'created_by', 'revoked_at']).where('id', '=', id).executeTakeFirst();
}

export async function markKeyRevoked(tx: Tx, id: string): Promise<void> {
  await tx.updateTable('api_keys').set({ revoked_at: new Date() }).where('id', '=', id).execute();
}

export async function keyHashExists(tx: Tx, hash: string): Promise<boolean> {
  return (await tx.selectFrom('api_keys').select('id').where('key_hash', '=', hash).executeTakeFirst()) !== undefined;
}

/** Tenant `default` on first boot; true when this call created it. */
export async function insertDefaultTenant(tx: Tx): Promise<boolean> {
  const row = await tx.insertInto('tenants').values({ id: 'default', name: 'Default' }).onConflict((oc) => oc.column('id').doNothing()).returning('id').executeTakeFirst();
  return row !== undefined;
}

/** A dashboard session's key and tenant, read in the tenant's transaction (undefined when either is gone). */
export async function sessionKey(tx: Tx, tenantId: string, keyId: string) {
  const k = await tx.selectFrom('api_keys').select(['id', 'role', 'revoked_at', 'expires_at']).where('id', '=', keyId).executeTakeFirst();
  const t = await tx.selectFrom('tenants').select(['name', 'deleted_at']).where('id', '=', tenantId).executeTakeFirst();
  return k && t ? { ...k, tenantName: t.name, deleted: t.deleted_at !== null } : undefined;
}
