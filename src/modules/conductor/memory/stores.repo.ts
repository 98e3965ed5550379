import { sql } from 'kysely';
import type { Tx } from '../../../db/index.ts';
import { jsonb } from '../../../db/index.ts';
import type { MemoryScope } from '../../../db/types.ts';
import type { MemoryMount } from '../../../contracts/memory.ts';

/** SQL for memory stores (sql/0025), the usage of their partitions, and what a run mounts. Tenant transactions only. */
export interface StoreRow {
  id: string;
  name: string;
  description: string;
  scope: MemoryScope;
  maxEntries: number;
  maxEntryBytes: number;
  maxTotalBytes: number;
  metadata: Record<string, string>;
  automationId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

const toStore = (r: any): StoreRow => ({
  id: r.id,
  name: r.name,
  description: r.description,
  scope: r.scope,
  maxEntries: r.max_entries,
  maxEntryBytes: r.max_entry_bytes,
  maxTotalBytes: Number(r.max_total_bytes),
  metadata: r.metadata ?? {},
  automationId: r.automation_id,
  createdAt: new Date(r.created_at),
  updatedAt: new Date(r.updated_at),
});

export interface NewStore {
  id: string;
  tenantId: string;
  name: string;
  description: string;
  scope: MemoryScope;
  maxEntries: number;
  maxEntryBytes: number;
  maxTotalBytes: number;
  metadata: Record<string, string>;
  automationId?: string;
}

/** Undefined when the name is taken. */
export async function insertStore(tx: Tx, s: NewStore): Promise<StoreRow | undefined> {
  const row = await tx
    .insertInto('memory_stores')
    .values({
      id: s.id,
      tenant_id: s.tenantId,
      name: s.name,
      description: s.description,
      scope: s.scope,
      max_entries: s.maxEntries,
      max_entry_bytes: s.maxEntryBytes,
      max_total_bytes: s.maxTotalBytes,
      metadata: jsonb(s.metadata),
      automation_id: s.automationId ?? null,
    })
    .onConflict((oc) => oc.columns(['tenant_id', 'name']).doNothing())
    .returningAll()
    .executeTakeFirst();
  return row ? toStore(row) : undefined;
}

export async function getStore(tx: Tx, by: { name: string } | { id: string }, opts: { forUpdate?: boolean } = {}): Promise<StoreRow | undefined> {
  let q = tx.selectFrom('memory_stores').selectAll();
  q = 'name' in by ? q.where('name', '=', by.name) : q.where('id', '=', by.id);
  if (opts.forUpdate) q = q.forUpdate();
  const row = await q.executeTakeFirst();
  return row ? toStore(row) : undefined;
}

export async function getStoresByName(tx: Tx, names: readonly string[]): Promise<StoreRow[]> {
  if (names.length === 0) return [];
  return (await tx.selectFrom('memory_stores').selectAll().where('name', 'in', names).execute()).map(toStore);
}

export async function automationStore(tx: Tx, automationId: string): Promise<StoreRow | undefined> {
  const row = await tx.selectFrom('memory_stores').selectAll().where('automation_id', '=', automationId).executeTakeFirst();
  return row ? toStore(row) : undefined;
}

/** Stores by name with what they hold (all partitions); a page of them and the total. */
export async function listStores(tx: Tx, page: { limit?: number; offset: number }) {
  let q = tx
    .selectFrom('memory_stores as s')
    .selectAll('s')
    .select((eb) => [
      eb.selectFrom('memory_entries as e').whereRef('e.store_id', '=', 's.id').select((x) => x.fn.countAll<number>().as('n')).as('entries'),
      eb.selectFrom('memory_entries as e').whereRef('e.store_id', '=', 's.id').select(sql<string>`coalesce(sum(e.bytes), 0)`.as('b')).as('bytes'),
    ])
    .orderBy('s.name');
  if (page.limit !== undefined) q = q.limit(page.limit).offset(page.offset);
  const rows = await q.execute();
  const total = Number((await tx.selectFrom('memory_stores').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  return { items: rows.map((r) => ({ store: toStore(r), entries: Number(r.entries ?? 0), bytes: Number(r.bytes ?? 0) })), total };
}

export async function updateStore(tx: Tx, id: string, patch: Partial<{ description: string; max_entries: number; max_entry_bytes: number; max_total_bytes: number; metadata: Record<string, string> }>): Promise<StoreRow> {
  const { metadata, ...rest } = patch;
  const row = await tx
    .updateTable('memory_stores')
    .set({ ...rest, ...(metadata ? { metadata: jsonb(metadata) } : {}), updated_at: sql<Date>`now()` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return toStore(row);
}

/** Deletes the store with its entries and versions (cascade); false when there was none. */
export async function deleteStore(tx: Tx, id: string): Promise<boolean> {
  return (await tx.deleteFrom('memory_stores').where('id', '=', id).executeTakeFirst()).numDeletedRows > 0n;
}

/** What a store holds, every partition together. */
export async function storeUsage(tx: Tx, storeId: string): Promise<{ entries: number; bytes: number }> {
  const row = await tx
    .selectFrom('memory_entries')
    .select((eb) => [eb.fn.countAll<number>().as('n'), sql<string>`coalesce(sum(bytes), 0)`.as('b')])
    .where('store_id', '=', storeId)
    .executeTakeFirstOrThrow();
  return { entries: Number(row.n), bytes: Number(row.b) };
}

/** What one partition holds. */
export async function partitionUsage(tx: Tx, storeId: string, partition: string): Promise<{ entries: number; bytes: number }> {
  const row = await tx
    .selectFrom('memory_entries')
    .select((eb) => [eb.fn.countAll<number>().as('n'), sql<string>`coalesce(sum(bytes), 0)`.as('b')])
    .where('store_id', '=', storeId)
    .where('partition', '=', partition)
    .executeTakeFirstOrThrow();
  return { entries: Number(row.n), bytes: Number(row.b) };
}

/** A per_user store's partitions (its end users) with what each holds, most recently written first. */
export async function listPartitions(tx: Tx, storeId: string, page: { limit: number; offset: number }) {
  const rows = await tx
    .selectFrom('memory_entries')
    .select((eb) => ['partition', eb.fn.countAll<number>().as('n'), sql<string>`sum(bytes)`.as('b'), eb.fn.max('updated_at').as('at')])
    .where('store_id', '=', storeId)
    .groupBy('partition')
    .orderBy('at', 'desc')
    .orderBy('partition')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
  const total = Number(
    (await tx.selectFrom('memory_entries').select(sql<number>`count(distinct partition)`.as('n')).where('store_id', '=', storeId).executeTakeFirstOrThrow()).n,
  );
  return { items: rows.map((r) => ({ userId: r.partition, entries: Number(r.n), bytes: Number(r.b), updatedAt: new Date(r.at as Date).toISOString() })), total };
}

/**
 * What run `runId` was given: its end user and the stores its profile mounts. Undefined for an unknown run (a run
 * token outlives nothing it was not minted for, but the run row is the authority).
 */
export async function runMemory(tx: Tx, runId: string): Promise<{ endUserId: string | null; mounts: MemoryMount[] } | undefined> {
  const row = await tx.selectFrom('runs').select(['end_user_id', 'memory_stores']).where('id', '=', runId).executeTakeFirst();
  return row ? { endUserId: row.end_user_id, mounts: (row.memory_stores as MemoryMount[] | null) ?? [] } : undefined;
}
