import type { Kysely } from 'kysely';
import type { DB, Tx } from '../../../db/index.ts';
import { withTenant } from '../../../db/index.ts';
import type { ResourceStatus } from '../../../db/types.ts';
import { prefixedId } from '../../../shared/ids.ts';
import { seconds } from '../deps.ts';
import { cursorPage, deletedObject, found, type CursorPage, type CursorQuery } from '../../crud/index.ts';
import { deleteVaultRow, insertVault, selectVault, selectVaults } from './vaults.repo.ts';

/**
 * Vaults (`client.beta.agents.vaults`, mounted at `/vaults`): named containers of MCP credentials. Deleting a vault
 * deletes its credentials (foreign-key cascade). Every vault is `active`; `archived` exists for the list filter and a
 * future archive operation, the SDK has no route that archives.
 */
export interface Vault {
  id: string;
  created_at: number;
  metadata: Record<string, string>;
  name: string | null;
  object: 'vault';
}

type VaultRow = { id: string; name: string | null; metadata: Record<string, string>; created_at: Date };
const toVault = (r: VaultRow): Vault => ({ id: r.id, created_at: seconds(r.created_at), metadata: r.metadata ?? {}, name: r.name, object: 'vault' });

export async function createVault(db: Kysely<DB>, tenantId: string, input: { name?: string | null; metadata?: Record<string, string> | null }): Promise<Vault> {
  const row = await withTenant(db, tenantId, (tx) => insertVault(tx, { id: prefixedId('vault'), tenantId, name: input.name ?? null, metadata: input.metadata ?? {} }));
  return toVault(row);
}

/** The vault row inside a tenant transaction, or 404 (also for another organisation's vault). */
export async function findVault(tx: Tx, id: string): Promise<Vault> {
  return toVault(found(await selectVault(tx, id), `No such vault: ${id}`));
}

export const getVault = (db: Kysely<DB>, tenantId: string, id: string) => withTenant(db, tenantId, (tx) => findVault(tx, id));

export async function listVaults(db: Kysely<DB>, tenantId: string, cursor: CursorQuery, status: ResourceStatus[] | undefined): Promise<CursorPage<Vault>> {
  const rows = await withTenant(db, tenantId, (tx) => selectVaults(tx, cursor, status));
  return cursorPage(rows.map(toVault), cursor.limit);
}

export async function deleteVault(db: Kysely<DB>, tenantId: string, id: string): Promise<{ id: string; deleted: true; object: 'vault.deleted' }> {
  found(await withTenant(db, tenantId, (tx) => deleteVaultRow(tx, id)), `No such vault: ${id}`);
  return deletedObject(id, 'vault.deleted');
}
