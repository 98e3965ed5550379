import type { Tx } from '../../../db/index.ts';
import { jsonb } from '../../../db/index.ts';
import type { Page } from '../../crud/index.ts';

/** SQL for profiles and pools, which share one shape: (tenant, name) → spec. */
export type SpecTable = 'profiles' | 'pools';
export type Spec = Record<string, unknown> & { id: string; name: string };

export async function listSpecs(tx: Tx, table: SpecTable, page: Page): Promise<{ items: Spec[]; total: number }> {
  let q = tx.selectFrom(table).select('spec').orderBy('name');
  if (page.limit !== undefined) q = q.limit(page.limit).offset(page.offset);
  const rows = await q.execute();
  const total =
    page.limit === undefined
      ? rows.length
      : Number((await tx.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  return { items: rows.map((r) => r.spec as Spec), total };
}

export async function getSpec(tx: Tx, table: SpecTable, name: string): Promise<Spec | undefined> {
  const row = await tx.selectFrom(table).select('spec').where('name', '=', name).executeTakeFirst();
  return row?.spec as Spec | undefined;
}

/** Inserts; returns false when the name is taken. */
export async function insertSpec(tx: Tx, table: SpecTable, tenantId: string, spec: Spec): Promise<boolean> {
  const row = await tx
    .insertInto(table)
    .values({ tenant_id: tenantId, name: spec.name, id: spec.id, spec: jsonb(spec) })
    .onConflict((oc) => oc.columns(['tenant_id', 'name']).doNothing())
    .returning('name')
    .executeTakeFirst();
  return row !== undefined;
}

export async function replaceProfile(tx: Tx, spec: Spec): Promise<boolean> {
  const row = await tx
    .updateTable('profiles')
    .set({ spec: jsonb(spec), id: spec.id, updated_at: new Date() })
    .where('name', '=', spec.name)
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
