import { sql } from 'kysely';
import { jsonb, type Tx } from '../../../db/index.ts';
import type { ResourceStatus } from '../../../db/types.ts';
import { keysetRows, type CursorQuery } from '../../crud/index.ts';

/** SQL of `vaults` and `vault_credentials` (credential secrets arrive sealed; this file never sees them open). */
export const VAULT_COLUMNS = ['id', 'name', 'metadata', 'created_at'] as const;
export const CREDENTIAL_COLUMNS = ['id', 'vault_id', 'name', 'auth', 'created_at', 'updated_at'] as const;

export function insertVault(tx: Tx, v: { id: string; tenantId: string; name: string | null; metadata: Record<string, string> }) {
  return tx.insertInto('vaults').values({ id: v.id, tenant_id: v.tenantId, name: v.name, metadata: jsonb(v.metadata) }).returning(VAULT_COLUMNS).executeTakeFirstOrThrow();
}

export function selectVault(tx: Tx, id: string) {
  return tx.selectFrom('vaults').select(VAULT_COLUMNS).where('id', '=', id).executeTakeFirst();
}

export function selectVaults(tx: Tx, cursor: CursorQuery, status: ResourceStatus[] | undefined) {
  let q = tx.selectFrom('vaults').select(VAULT_COLUMNS);
  if (status) q = q.where('status', 'in', status);
  return keysetRows(q, 'vaults', cursor);
}

export async function deleteVaultRow(tx: Tx, id: string): Promise<boolean> {
  return (await tx.deleteFrom('vaults').where('id', '=', id).returning('id').executeTakeFirst()) !== undefined;
}

export function insertCredential(tx: Tx, c: { id: string; tenantId: string; vaultId: string; name: string; auth: unknown; sealed: string }) {
  return tx
    .insertInto('vault_credentials')
    .values({ id: c.id, tenant_id: c.tenantId, vault_id: c.vaultId, name: c.name, auth: jsonb(c.auth), sealed: c.sealed })
    .returning(CREDENTIAL_COLUMNS)
    .executeTakeFirstOrThrow();
}

export function selectCredential(tx: Tx, vaultId: string, id: string) {
  return tx.selectFrom('vault_credentials').select(CREDENTIAL_COLUMNS).where('vault_id', '=', vaultId).where('id', '=', id).executeTakeFirst();
}

export function selectCredentials(tx: Tx, vaultId: string, cursor: CursorQuery, status: ResourceStatus[] | undefined) {
  let q = tx.selectFrom('vault_credentials').select(CREDENTIAL_COLUMNS).where('vault_id', '=', vaultId);
  if (status) q = q.where('status', 'in', status);
  return keysetRows(q, 'vault_credentials', cursor);
}

/** The credential's auth and sealed secrets, locked for a rotation. */
export function lockCredential(tx: Tx, vaultId: string, id: string) {
  return tx.selectFrom('vault_credentials').select(['auth', 'sealed']).where('vault_id', '=', vaultId).where('id', '=', id).forUpdate().executeTakeFirst();
}

export function updateCredentialAuth(tx: Tx, id: string, auth: unknown, sealed: string) {
  return tx.updateTable('vault_credentials').set({ auth: jsonb(auth), sealed, updated_at: new Date() }).where('id', '=', id).returning(CREDENTIAL_COLUMNS).executeTakeFirstOrThrow();
}

export async function deleteCredentialRow(tx: Tx, vaultId: string, id: string): Promise<boolean> {
  return (await tx.deleteFrom('vault_credentials').where('vault_id', '=', vaultId).where('id', '=', id).returning('id').executeTakeFirst()) !== undefined;
}

/** Active credentials of the vaults, by id or by the MCP server URL in their public auth. */
export function matchingCredentials(tx: Tx, vaultIds: string[], by: { credentialId?: string; serverUrl: string }) {
  let q = tx.selectFrom('vault_credentials').select(['id', 'vault_id', 'auth', 'sealed']).where('vault_id', 'in', vaultIds).where('status', '=', 'active');
  q = by.credentialId ? q.where('id', '=', by.credentialId) : q.where(sql<string>`auth->>'mcp_server_url'`, '=', by.serverUrl);
  return q.execute();
}

/** Which of `ids` are vaults of the tenant. */
export function existingVaultIds(tx: Tx, ids: string[]) {
  return tx.selectFrom('vaults').select('id').where('id', 'in', ids).execute();
}
