import { sql, type Kysely } from 'kysely';
import { jsonb, type DB, type Tx } from '../../../db/index.ts';
import type { Role } from './roles.ts';

/** SQL of the tenants table (operator transactions, except where a tenant reads its own row). */
export const TENANT_COLUMNS = ['id', 'name', 'metadata', 'created_at', 'updated_at', 'deleted_at'] as const;

export function selectTenants(tx: Tx, includeDeleted: boolean) {
  let q = tx.selectFrom('tenants').select(TENANT_COLUMNS).orderBy('id');
  if (!includeDeleted) q = q.where('deleted_at', 'is', null);
  return q.execute();
}

export function selectTenant(tx: Tx, id: string) {
  return tx.selectFrom('tenants').select(TENANT_COLUMNS).where('id', '=', id).executeTakeFirst();
}

/** Undefined when the id is taken. */
export function insertTenant(tx: Tx, t: { id: string; name: string; metadata?: Record<string, unknown> }) {
  return tx
    .insertInto('tenants')
    .values({ id: t.id, name: t.name, ...(t.metadata !== undefined ? { metadata: jsonb(t.metadata) } : {}) })
    .onConflict((oc) => oc.column('id').doNothing())
    .returning(TENANT_COLUMNS)
    .executeTakeFirst();
}

export function updateTenantRow(tx: Tx, id: string, input: { name?: string; metadata?: Record<string, unknown> }) {
  return tx
    .updateTable('tenants')
    .set({
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.metadata !== undefined ? { metadata: jsonb(input.metadata) } : {}),
      updated_at: new Date(),
    })
    .where('id', '=', id)
    .returning(TENANT_COLUMNS)
    .executeTakeFirst();
}

/** Undefined when the tenant is unknown or already deleted. */
export function softDeleteTenantRow(tx: Tx, id: string) {
  return tx.updateTable('tenants').set({ deleted_at: new Date(), updated_at: new Date() }).where('id', '=', id).where('deleted_at', 'is', null).returning('id').executeTakeFirst();
}

/** The name and deletion time of the tenant the transaction is scoped to. */
export function tenantStatus(tx: Tx, id: string) {
  return tx.selectFrom('tenants').select(['name', 'deleted_at']).where('id', '=', id).executeTakeFirst();
}

export type KeyLookupRow = { id: string; tenant_id: string; role: Role; expires_at: Date | null; revoked_at: Date | null; tenant_name: string; tenant_deleted_at: Date | null };

/** A key by its HMAC through `svc_lookup_key` (security definer: before any tenant is known). */
export async function lookupKey(db: Kysely<DB>, hash: string): Promise<KeyLookupRow | undefined> {
  const { rows } = await sql<KeyLookupRow>`select * from svc_lookup_key(${hash})`.execute(db);
  return rows[0];
}
