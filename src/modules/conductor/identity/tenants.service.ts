import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { withOperator, withTenant } from '../../../db/index.ts';
import { found } from '../../crud/index.ts';
import { badRequest, conflict, notFound } from '../../../shared/errors.ts';
import type { Principal } from './auth.ts';
import { futureExpiry, insertKey, type ApiKeyView, type KeyDeps } from './keys.service.ts';
import { insertTenant, selectTenant, selectTenants, softDeleteTenantRow, tenantStatus, updateTenantRow } from './tenants.repo.ts';

/** Tenants: operator-only management with soft delete; `default` cannot be deleted. */
export interface TenantView {
  id: string;
  name: string;
  metadata: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
  deletedAt: string | null;
}

type Row = { id: string; name: string; metadata: Record<string, unknown>; created_at: Date; updated_at: Date; deleted_at: Date | null };
const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);
const toView = (r: Row): TenantView => ({ id: r.id, name: r.name, metadata: r.metadata ?? {}, createdAt: iso(r.created_at)!, updatedAt: iso(r.updated_at)!, deletedAt: iso(r.deleted_at) });

export async function listTenants(db: Kysely<DB>, includeDeleted: boolean): Promise<{ total: number; tenants: TenantView[] }> {
  const rows = await withOperator(db, (tx) => selectTenants(tx, includeDeleted));
  return { total: rows.length, tenants: rows.map(toView) };
}

export async function getTenant(db: Kysely<DB>, id: string): Promise<TenantView> {
  return toView(found(await withOperator(db, (tx) => selectTenant(tx, id)), 'unknown tenant'));
}

export async function createTenant(db: Kysely<DB>, input: { id: string; name: string; metadata?: Record<string, unknown> }): Promise<TenantView> {
  const row = await withOperator(db, (tx) => insertTenant(tx, { id: input.id, name: input.name, metadata: input.metadata ?? {} }));
  if (!row) throw conflict(`tenant ${input.id} already exists`);
  return toView(row);
}

export async function updateTenant(db: Kysely<DB>, id: string, input: { name?: string; metadata?: Record<string, unknown> }): Promise<TenantView> {
  return toView(found(await withOperator(db, (tx) => updateTenantRow(tx, id, input)), 'unknown tenant'));
}

export async function softDeleteTenant(db: Kysely<DB>, id: string): Promise<void> {
  if (id === 'default') throw badRequest('tenant default cannot be deleted');
  const row = await withOperator(db, (tx) => softDeleteTenantRow(tx, id));
  if (!row) await getTenant(db, id); // 404 when unknown; already deleted is a no-op
}

/** A one-time owner key of a tenant, minted by the operator: how a tenant it created gets its first key. */
export async function issueOwnerKey(
  deps: KeyDeps,
  operator: Principal,
  tenantId: string,
  input: { name: string; expiresAt?: string | null },
): Promise<ApiKeyView & { token: string }> {
  const expiresAt = futureExpiry(input.expiresAt);
  if ((await getTenant(deps.db, tenantId)).deletedAt) throw notFound('unknown tenant');
  return insertKey(deps, tenantId, { name: input.name, role: 'owner', createdBy: operator.keyId ?? operator.subject, expiresAt });
}

export async function tenantName(db: Kysely<DB>, id: string): Promise<string | null> {
  const row = await withTenant(db, id, (tx) => tenantStatus(tx, id));
  return row?.name ?? null;
}
