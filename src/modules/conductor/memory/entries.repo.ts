import { sql } from 'kysely';
import type { Tx } from '../../../db/index.ts';
import type { MemoryOperation } from '../../../db/types.ts';
import type { MemoryEntry, MemoryEntrySummary, MemorySearchHit } from '../../../contracts/memory.ts';

/** SQL for memory entries and their versions (sql/0025): one partition of one store at a time. */
export interface Where {
  storeId: string;
  partition: string;
}

export interface EntryRow extends MemoryEntry {
  partition: string;
}

const iso = (d: unknown) => new Date(d as Date).toISOString();

const toEntry = (r: any): EntryRow => ({
  id: r.id,
  partition: r.partition,
  path: r.path,
  content: r.content,
  bytes: r.bytes,
  sha256: r.sha256,
  version: r.version,
  versionId: r.version_id,
  createdAt: iso(r.created_at),
  updatedAt: iso(r.updated_at),
});

const SUMMARY = ['id', 'partition', 'path', 'bytes', 'sha256', 'version', 'version_id', 'created_at', 'updated_at'] as const;

/**
 * Serialises the writes of one partition for the rest of the transaction, so its size caps hold when two sessions
 * write at once (the counts read after this are the ones the write lands on).
 */
export async function lockPartition(tx: Tx, w: Where): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`memory\u0000${w.storeId}\u0000${w.partition}`}, 0))`.execute(tx);
}

export async function getEntry(tx: Tx, w: Where, path: string, opts: { forUpdate?: boolean } = {}): Promise<EntryRow | undefined> {
  let q = tx.selectFrom('memory_entries').select([...SUMMARY, 'content']).where('store_id', '=', w.storeId).where('partition', '=', w.partition).where('path', '=', path);
  if (opts.forUpdate) q = q.forUpdate();
  const row = await q.executeTakeFirst();
  return row ? toEntry(row) : undefined;
}

export async function getEntryById(tx: Tx, storeId: string, id: string, opts: { forUpdate?: boolean } = {}): Promise<EntryRow | undefined> {
  let q = tx.selectFrom('memory_entries').select([...SUMMARY, 'content']).where('store_id', '=', storeId).where('id', '=', id);
  if (opts.forUpdate) q = q.forUpdate();
  const row = await q.executeTakeFirst();
  return row ? toEntry(row) : undefined;
}

/** Entries below `prefix` (a folder path ending in `/`, or `/` for all), by path; without content. */
export async function listEntries(tx: Tx, w: Where, prefix: string, page: { limit?: number; offset: number }): Promise<{ items: MemoryEntrySummary[]; total: number }> {
  let base = tx.selectFrom('memory_entries').where('store_id', '=', w.storeId).where('partition', '=', w.partition);
  if (prefix !== '/') base = base.where(sql<boolean>`starts_with(path, ${prefix})`);
  let q = base.select(SUMMARY).orderBy('path');
  if (page.limit !== undefined) q = q.limit(page.limit).offset(page.offset);
  const items = (await q.execute()).map((r) => {
    const { partition: _p, ...rest } = toEntry({ ...r, content: '' });
    const { content: _c, ...summary } = rest;
    return summary;
  });
  const total = page.limit === undefined ? items.length : Number((await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  return { items, total };
}

export async function insertEntry(tx: Tx, e: { id: string; tenantId: string; partition: string; storeId: string; path: string; content: string; bytes: number; sha256: string; version: number; versionId: string }): Promise<EntryRow> {
  const row = await tx
    .insertInto('memory_entries')
    .values({ id: e.id, tenant_id: e.tenantId, store_id: e.storeId, partition: e.partition, path: e.path, content: e.content, bytes: e.bytes, sha256: e.sha256, version: e.version, version_id: e.versionId })
    .returning([...SUMMARY, 'content'])
    .executeTakeFirstOrThrow();
  return toEntry(row);
}

export async function updateEntry(tx: Tx, id: string, set: { path?: string; content?: string; bytes?: number; sha256?: string; version: number; versionId: string }): Promise<EntryRow> {
  const { versionId, ...rest } = set;
  const row = await tx
    .updateTable('memory_entries')
    .set({ ...rest, version_id: versionId, updated_at: sql<Date>`now()` })
    .where('id', '=', id)
    .returning([...SUMMARY, 'content'])
    .executeTakeFirstOrThrow();
  return toEntry(row);
}

export async function deleteEntry(tx: Tx, id: string): Promise<void> {
  await tx.deleteFrom('memory_entries').where('id', '=', id).execute();
}

export interface VersionRow {
  id: string;
  entryId: string;
  partition: string;
  path: string;
  version: number;
  operation: MemoryOperation;
  content: string | null;
  bytes: number | null;
  sha256: string | null;
  actor: string;
  restoredFrom: string | null;
  createdAt: string;
}

const toVersion = (r: any): VersionRow => ({
  id: r.id,
  entryId: r.entry_id,
  partition: r.partition,
  path: r.path,
  version: r.version,
  operation: r.operation,
  content: r.content ?? null,
  bytes: r.bytes,
  sha256: r.sha256,
  actor: r.actor,
  restoredFrom: r.restored_from,
  createdAt: iso(r.created_at),
});

export async function insertVersion(
  tx: Tx,
  v: { id: string; tenantId: string; storeId: string; entryId: string; partition: string; path: string; version: number; operation: MemoryOperation; content: string | null; bytes: number | null; sha256: string | null; actor: string; restoredFrom?: string },
): Promise<void> {
  await tx
    .insertInto('memory_versions')
    .values({
      id: v.id,
      tenant_id: v.tenantId,
      store_id: v.storeId,
      entry_id: v.entryId,
      partition: v.partition,
      path: v.path,
      version: v.version,
      operation: v.operation,
      content: v.content,
      bytes: v.bytes,
      sha256: v.sha256,
      actor: v.actor,
      restored_from: v.restoredFrom ?? null,
    })
    .execute();
}

/** Versions of one partition, newest first: of one entry (`entryId`), of whatever was ever at `path`, or all. */
export async function listVersions(tx: Tx, w: Where, filter: { entryId?: string; path?: string }, page: { limit: number; offset: number }, withContent = false): Promise<{ items: VersionRow[]; total: number }> {
  let base = tx.selectFrom('memory_versions').where('store_id', '=', w.storeId).where('partition', '=', w.partition);
  if (filter.entryId) base = base.where('entry_id', '=', filter.entryId);
  if (filter.path) {
    const path = filter.path;
    // an entry that was renamed away keeps its history: every entry that ever had this path
    base = base.where('entry_id', 'in', (eb) => eb.selectFrom('memory_versions').select('entry_id').where('store_id', '=', w.storeId).where('partition', '=', w.partition).where('path', '=', path));
  }
  const columns = ['id', 'entry_id', 'partition', 'path', 'version', 'operation', 'bytes', 'sha256', 'actor', 'restored_from', 'created_at'] as const;
  const rows = await (withContent ? base.select([...columns, 'content']) : base.select(columns))
    .orderBy('created_at', 'desc')
    .orderBy('version', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
  const total = Number((await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  return { items: rows.map(toVersion), total };
}

/** Where an entry lives (deleted or not): its partition and the path of its latest version. */
export async function locateEntry(tx: Tx, storeId: string, entryId: string): Promise<{ partition: string; path: string } | undefined> {
  return tx.selectFrom('memory_versions').select(['partition', 'path']).where('store_id', '=', storeId).where('entry_id', '=', entryId).orderBy('version', 'desc').limit(1).executeTakeFirst();
}

export async function getVersion(tx: Tx, storeId: string, id: string): Promise<VersionRow | undefined> {
  const row = await tx.selectFrom('memory_versions').selectAll().where('store_id', '=', storeId).where('id', '=', id).executeTakeFirst();
  return row ? toVersion(row) : undefined;
}

/**
 * Full-text search over the partitions `where`, best first: PostgreSQL's `websearch_to_tsquery` (words, "phrases",
 * `or`, `-not`) against the path (weighted higher) and the content, ranked by `ts_rank_cd`, with a snippet.
 */
export async function searchEntries(tx: Tx, where: ReadonlyArray<Where & { store: string }>, q: string, limit: number): Promise<MemorySearchHit[]> {
  if (where.length === 0) return [];
  const scope = sql.join(where.map((w) => sql`(e.store_id = ${w.storeId} and e.partition = ${w.partition})`), sql` or `);
  const names = sql.join(where.map((w) => sql`when ${w.storeId} then ${w.store}`), sql` `);
  const { rows } = await sql<{ store: string; path: string; version: number; bytes: number; rank: number; snippet: string; updated_at: Date }>`
    select case e.store_id ${names} end as store, e.path, e.version, e.bytes, ts_rank_cd(e.search, query) as rank,
           ts_headline('english', e.content, query, 'StartSel=«, StopSel=», MaxWords=24, MinWords=8, MaxFragments=2, FragmentDelimiter=" … "') as snippet,
           e.updated_at
    from memory_entries e, websearch_to_tsquery('english', ${q}) query
    where (${scope}) and e.search @@ query
    order by rank desc, e.updated_at desc, e.path
    limit ${limit}`.execute(tx);
  return rows.map((r) => ({ store: r.store, path: r.path, version: r.version, bytes: r.bytes, rank: Number(r.rank), snippet: r.snippet, updatedAt: iso(r.updated_at) }));
}

/**
 * The retention of versions (system scope: every tenant): a version that is no longer its entry's head goes once the
 * version after it is older than `before`; a deleted entry's last version (its tombstone) goes once it is that old.
 * What is left is restorable.
 */
export async function purgeVersions(tx: Tx, before: Date): Promise<number> {
  const { numDeletedRows } = await tx
    .deleteFrom('memory_versions as v')
    .where((eb) =>
      eb.or([
        eb.exists(eb.selectFrom('memory_versions as n').select(sql`1`.as('x')).whereRef('n.entry_id', '=', 'v.entry_id').whereRef('n.version', '>', 'v.version').where('n.created_at', '<', before)),
        eb.and([
          eb('v.operation', '=', 'deleted'),
          eb('v.created_at', '<', before),
          eb.not(eb.exists(eb.selectFrom('memory_entries as e').select(sql`1`.as('x')).whereRef('e.id', '=', 'v.entry_id'))),
        ]),
      ]),
    )
    .executeTakeFirst();
  return Number(numDeletedRows);
}
