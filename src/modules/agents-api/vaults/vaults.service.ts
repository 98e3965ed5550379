import type { Kysely } from 'kysely';
import type { DB, Tx } from '../../../db/index.ts';
import { jsonb, withTenant } from '../../../db/index.ts';
import type { ResourceStatus } from '../../../db/types.ts';
import { notFound } from '../../../shared/errors.ts';
import { prefixedId } from '../../../shared/ids.ts';
import { seconds } from '../deps.ts';
import { keysetRows } from '../../crud/index.ts';
import { cursorPage, type CursorPage, type CursorQuery } from '../../crud/index.ts';

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
const COLUMNS = ['id', 'name', 'metadata', 'created_at'] as const;
const toVault = (r: VaultRow): Vault => ({ id: r.id, created_at: seconds(r.created_at), metadata: r.metadata ?? {}, name: r.name, object: 'vault' });

export async function createVault(db: Kysely<DB>, tenantId: string, input: { name?: string | null; metadata?: Record<string, string> | null }): Promise<Vault> {
  const row = await withTenant(db, tenantId, (tx) =>
    tx
      .insertInto('vaults')
      .values({ id: prefixedId('vault'), tenant_id: tenantId, name: input.name ?? null, metadata: jsonb(input.metadata ?? {}) })
      .returning(COLUMNS)
      .executeTakeFirstOrThrow(),
  );
  return toVault(row);
}

/** The vault row inside a tenant transaction, or 404 (also for another organisation's vault). */
export async function findVault(tx: Tx, id: string): Promise<Vault> {
  const row = await tx.selectFrom('vaults').select(COLUMNS).where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound(`No such vault: ${id}`);
  return toVault(row);
}

export const getVault = (db: Kysely<DB>, tenantId: string, id: string) => withTenant(db, tenantId, (tx) => findVault(tx, id));

export async function listVaults(db: Kysely<DB>, tenantId: string, cursor: CursorQuery, status: ResourceStatus[] | undefined): Promise<CursorPage<Vault>> {
  const rows = await withTenant(db, tenantId, (tx) => {
    let q = tx.selectFrom('vaults').select(COLUMNS);
    if (status) q = q.where('status', 'in', status);
    return keysetRows(q, 'vaults', cursor);
  });
  return cursorPage(rows.map(toVault), cursor.limit);
}

export async function deleteVault(db: Kysely<DB>, tenantId: string, id: string): Promise<{ id: string; deleted: true; object: 'vault.deleted' }> {
  const gone = await withTenant(db, tenantId, (tx) => tx.deleteFrom('vaults').where('id', '=', id).returning('id').executeTakeFirst());
  if (!gone) throw notFound(`No such vault: ${id}`);
  return { id, deleted: true, object: 'vault.deleted' };
}
