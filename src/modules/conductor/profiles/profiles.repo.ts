import type { Tx } from '../../../db/index.ts';
import { sql } from 'kysely';
import { jsonb } from '../../../db/index.ts';
import type { Page } from '../../crud/index.ts';
import { diffSpecs, insertHistory } from './profile-history.repo.ts';

/** SQL for profiles and pools, which share one shape: (tenant, name) → spec. */
export type SpecTable = 'profiles' | 'pools';
export type Spec = Record<string, unknown> & { id: string; name: string };

/**
 * A page of specs by name. `pinned: true` (profiles, pods) puts pinned ones first and adds `pinned` to each; without
 * it the list is the plain spec list of /api/pools.
 */
export async function listSpecs(tx: Tx, table: SpecTable, page: Page, opts: { pinned?: boolean } = {}): Promise<{ items: Spec[]; total: number }> {
  let q = tx.selectFrom(table).select(['spec', 'pinned_at']);
  q = opts.pinned ? q.orderBy(sql`pinned_at IS NULL`).orderBy('name') : q.orderBy('name');
  if (page.limit !== undefined) q = q.limit(page.limit).offset(page.offset);
  const rows = await q.execute();
  const total =
    page.limit === undefined
      ? rows.length
      : Number((await tx.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  return { items: rows.map((r) => (opts.pinned ? { ...(r.spec as Spec), pinned: r.pinned_at !== null } : (r.spec as Spec))), total };
}

export async function getSpec(tx: Tx, table: SpecTable, name: string): Promise<Spec | undefined> {
  const row = await tx.selectFrom(table).select('spec').where('name', '=', name).executeTakeFirst();
  return row?.spec as Spec | undefined;
}

/** The spec with `pinned` (profiles and pods answer it on get). */
export async function getPinnedSpec(tx: Tx, table: SpecTable, name: string, lock = false): Promise<Spec | undefined> {
  let q = tx.selectFrom(table).select(['spec', 'pinned_at']).where('name', '=', name);
  if (lock) q = q.forUpdate();
  const row = await q.executeTakeFirst();
  return row ? { ...(row.spec as Spec), pinned: row.pinned_at !== null } : undefined;
}

/** Inserts; returns false when the name is taken. A profile's creation is version 1 of its history (`changedBy`: who). */
export async function insertSpec(tx: Tx, table: SpecTable, tenantId: string, spec: Spec, changedBy: string | null = null): Promise<boolean> {
  const row = await tx
    .insertInto(table)
    .values({ tenant_id: tenantId, name: spec.name, id: spec.id, spec: jsonb(spec) })
    .onConflict((oc) => oc.columns(['tenant_id', 'name']).doNothing())
    .returning('name')
    .executeTakeFirst();
  if (row && table === 'profiles') await insertHistory(tx, { tenantId, name: spec.name, version: 1, changedBy, changes: diffSpecs(undefined, spec) });
  return row !== undefined;
}

/**
 * Replaces a profile's spec and records what changed as its next version; nothing changed, nothing recorded.
 * Returns the version, or undefined when there is no such profile.
 */
export async function replaceProfile(tx: Tx, tenantId: string, before: Spec, spec: Spec, changedBy: string | null): Promise<number | undefined> {
  const changes = diffSpecs(before, spec);
  const same = Object.keys(changes).length === 0;
  const row = await tx
    .updateTable('profiles')
    .set((eb) => ({ spec: jsonb(spec), id: spec.id, ...(same ? {} : { updated_at: new Date(), version: eb('version', '+', 1) }) }))
    .where('name', '=', spec.name)
    .returning('version')
    .executeTakeFirst();
  if (row && !same) await insertHistory(tx, { tenantId, name: spec.name, version: row.version, changedBy, changes });
  return row?.version;
}

/** Pins (now) or unpins; false when there is no such row. Pinning again keeps the first pin's time. */
export async function setPinned(tx: Tx, table: SpecTable, name: string, pinned: boolean): Promise<boolean> {
  const row = await tx
    .updateTable(table)
    .set({ pinned_at: pinned ? sql<Date>`coalesce(pinned_at, now())` : null })
    .where('name', '=', name)
    .returning('name')
    .executeTakeFirst();
  return row !== undefined;
}

export async function deleteSpec(tx: Tx, table: SpecTable, name: string): Promise<boolean> {
  const row = await tx.deleteFrom(table).where('name', '=', name).returning('name').executeTakeFirst();
  return row !== undefined;
}

/** Every tenant's specs (system scope), for pushing state back to a restarted runner. */
export async function allSpecs(tx: Tx, table: SpecTable): Promise<Array<{ tenantId: string; spec: Spec }>> {
  const rows = await tx.selectFrom(table).select(['tenant_id', 'spec']).execute();
  return rows.map((r) => ({ tenantId: r.tenant_id, spec: r.spec as Spec }));
}

/** Replaces a pool's spec (pods update their supplied fields through this); false when there is no such pool. */
export async function replacePool(tx: Tx, spec: Spec): Promise<boolean> {
  const { pinned: _pinned, ...stored } = spec;
  const row = await tx.updateTable('pools').set({ spec: jsonb(stored), updated_at: new Date() }).where('name', '=', spec.name).returning('name').executeTakeFirst();
  return row !== undefined;
}
