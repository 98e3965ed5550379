import { sql, type Kysely } from 'kysely';
import type { DB, Tx } from '../../../db/index.ts';
import { jsonb } from '../../../db/index.ts';
import type { KitKind } from '../../../db/types.ts';
import type { KitManifest } from './kit.schema.ts';

/**
 * SQL for kits (`kits`, `kit_copies`, `kit_events`, sql/0016). Writes run in the author's tenant transaction. Reads
 * of shared kits run in `withKitRead`, which also opens every tenant's kit rows for SELECT (the kits_shared_read
 * policy): a kit is shared by its id or slug, and holds only sanitized content.
 */
export interface KitRow {
  id: string;
  tenantId: string;
  slug: string;
  label: string;
  description: string;
  kind: KitKind;
  sourceName: string;
  version: number;
  manifest: KitManifest;
  builtIn: boolean;
  authorHandle: string;
  authorName: string;
  createdAt: string;
  updatedAt: string;
  deletedAt: string | null;
}

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);
const toRow = (r: any): KitRow => ({
  id: r.id,
  tenantId: r.tenant_id,
  slug: r.slug,
  label: r.label,
  description: r.description,
  kind: r.kind,
  sourceName: r.source_name,
  version: r.version,
  manifest: r.manifest as KitManifest,
  builtIn: r.built_in,
  authorHandle: r.author_handle,
  authorName: r.author_name,
  createdAt: iso(r.created_at)!,
  updatedAt: iso(r.updated_at)!,
  deletedAt: iso(r.deleted_at),
});

/** A transaction that reads shared kits (any tenant's) and writes as `tenantId` (null: the public routes, no tenant). */
export async function withKitRead<T>(db: Kysely<DB>, tenantId: string | null, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (tx) => {
    await sql`select set_config('app.kit_read', 'on', true), set_config('app.tenant_id', ${tenantId ?? ''}, true)`.execute(tx);
    return fn(tx);
  });
}

export interface NewKit {
  id: string;
  tenantId: string;
  slug: string;
  label: string;
  description: string;
  kind: KitKind;
  sourceName: string;
  manifest: KitManifest;
  authorHandle: string;
  authorName: string;
}

/** Undefined when the tenant has a live kit with this slug. */
export async function insertKit(tx: Tx, k: NewKit): Promise<KitRow | undefined> {
  const row = await tx
    .insertInto('kits')
    .values({ id: k.id, tenant_id: k.tenantId, slug: k.slug, label: k.label, description: k.description, kind: k.kind, source_name: k.sourceName, manifest: jsonb(k.manifest), author_handle: k.authorHandle, author_name: k.authorName })
    .onConflict((oc) => oc.columns(['tenant_id', 'slug']).where('deleted_at', 'is', null).doNothing())
    .returningAll()
    .executeTakeFirst();
  return row ? toRow(row) : undefined;
}

/** The caller's own live kit with this slug (locked for a change). */
export async function ownKit(tx: Tx, tenantId: string, slug: string): Promise<KitRow | undefined> {
  const row = await tx.selectFrom('kits').selectAll().where('tenant_id', '=', tenantId).where('slug', '=', slug).where('deleted_at', 'is', null).forUpdate().executeTakeFirst();
  return row ? toRow(row) : undefined;
}

/** The caller's own live kit with this id (locked for a change). */
export async function ownKitById(tx: Tx, tenantId: string, id: string): Promise<KitRow | undefined> {
  const row = await tx.selectFrom('kits').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).where('deleted_at', 'is', null).forUpdate().executeTakeFirst();
  return row ? toRow(row) : undefined;
}

export async function updateKit(tx: Tx, id: string, patch: { label?: string; description?: string; manifest?: KitManifest; bumpVersion?: boolean; deleted?: boolean }): Promise<KitRow> {
  const row = await tx
    .updateTable('kits')
    .set({
      ...(patch.label !== undefined ? { label: patch.label } : {}),
      ...(patch.description !== undefined ? { description: patch.description } : {}),
      ...(patch.manifest ? { manifest: jsonb(patch.manifest) } : {}),
      ...(patch.bumpVersion ? { version: sql<number>`version + 1` } : {}),
      ...(patch.deleted ? { deleted_at: sql<Date>`now()` } : {}),
      updated_at: sql<Date>`now()`,
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return toRow(row);
}

/** Every kit (live or deleted) with this slug, in any tenant (`org` narrows to one); newest first. */
export async function kitsBySlug(tx: Tx, slug: string, org?: string): Promise<KitRow[]> {
  let q = tx.selectFrom('kits').selectAll().where('slug', '=', slug);
  if (org !== undefined) q = q.where('tenant_id', '=', org);
  return (await q.orderBy('created_at', 'desc').execute()).map(toRow);
}

export async function kitById(tx: Tx, id: string): Promise<KitRow | undefined> {
  const row = await tx.selectFrom('kits').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? toRow(row) : undefined;
}

export async function listOwnKits(tx: Tx, tenantId: string): Promise<KitRow[]> {
  return (await tx.selectFrom('kits').selectAll().where('tenant_id', '=', tenantId).where('deleted_at', 'is', null).orderBy('slug').execute()).map(toRow);
}

export interface CopyRow {
  kitId: string;
  targetName: string;
  version: number;
  created: unknown[];
  copiedAt: string;
}

export async function listCopied(tx: Tx, tenantId: string): Promise<Array<{ kit: KitRow; copy: CopyRow }>> {
  const rows = await tx
    .selectFrom('kit_copies as c')
    .innerJoin('kits as k', 'k.id', 'c.kit_id')
    .selectAll('k')
    .select(['c.target_name', 'c.version as copied_version', 'c.created', 'c.copied_at'])
    .where('c.tenant_id', '=', tenantId)
    .orderBy('c.copied_at', 'desc')
    .execute();
  return rows.map((r: any) => ({ kit: toRow(r), copy: { kitId: r.id, targetName: r.target_name, version: r.copied_version, created: r.created, copiedAt: iso(r.copied_at)! } }));
}

export async function recordCopy(tx: Tx, tenantId: string, c: { kitId: string; targetName: string; version: number; created: unknown[] }): Promise<void> {
  await tx
    .insertInto('kit_copies')
    .values({ tenant_id: tenantId, kit_id: c.kitId, target_name: c.targetName, version: c.version, created: jsonb(c.created) })
    .onConflict((oc) => oc.columns(['tenant_id', 'kit_id', 'target_name']).doUpdateSet({ version: c.version, created: jsonb(c.created), copied_at: sql<Date>`now()` }))
    .execute();
}

export async function insertKitEvent(tx: Tx, kitId: string, kind: 'view' | 'click', signedIn: boolean): Promise<void> {
  await tx.insertInto('kit_events').values({ kit_id: kitId, kind, signed_in: signedIn }).execute();
}

export async function kitEventCounts(tx: Tx, kitId: string): Promise<{ views: number; clicks: number }> {
  const rows = await tx.selectFrom('kit_events').select(['kind', (eb) => eb.fn.countAll<string>().as('n')]).where('kit_id', '=', kitId).groupBy('kind').execute();
  const n = (k: string) => Number(rows.find((r) => r.kind === k)?.n ?? 0);
  return { views: n('view'), clicks: n('click') };
}
