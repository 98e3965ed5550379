import { sql } from 'kysely';
import type { Tx } from '../../../db/index.ts';
import { jsonb } from '../../../db/index.ts';
import type { NodeSpec } from './plan.ts';

/** SQL for workflow definitions (sql/0015): a named, reusable node list. */
export interface Definition {
  id: string;
  name: string;
  nodes: NodeSpec[];
  createdAt: string;
  updatedAt: string;
}

const toDefinition = (r: { id: string; name: string; nodes: unknown; created_at: Date; updated_at: Date }): Definition => ({
  id: r.id,
  name: r.name,
  nodes: r.nodes as NodeSpec[],
  createdAt: new Date(r.created_at).toISOString(),
  updatedAt: new Date(r.updated_at).toISOString(),
});

export async function insertDefinition(tx: Tx, d: { id: string; tenantId: string; name: string; nodes: NodeSpec[] }): Promise<Definition> {
  const row = await tx.insertInto('workflow_definitions').values({ id: d.id, tenant_id: d.tenantId, name: d.name, nodes: jsonb(d.nodes) }).returningAll().executeTakeFirstOrThrow();
  return toDefinition(row);
}

export async function getDefinition(tx: Tx, id: string): Promise<Definition | undefined> {
  const row = await tx.selectFrom('workflow_definitions').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? toDefinition(row) : undefined;
}

export async function listDefinitions(tx: Tx, page: { limit: number; offset: number }): Promise<{ items: Definition[]; total: number }> {
  const rows = await tx.selectFrom('workflow_definitions').selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute();
  const total = Number((await tx.selectFrom('workflow_definitions').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  return { items: rows.map(toDefinition), total };
}

export async function updateDefinition(tx: Tx, id: string, patch: { name?: string; nodes?: NodeSpec[] }): Promise<Definition | undefined> {
  const row = await tx
    .updateTable('workflow_definitions')
    .set({ ...(patch.name !== undefined ? { name: patch.name } : {}), ...(patch.nodes !== undefined ? { nodes: jsonb(patch.nodes) } : {}), updated_at: sql<Date>`now()` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
  return row ? toDefinition(row) : undefined;
}

export async function deleteDefinition(tx: Tx, id: string): Promise<boolean> {
  return (await tx.deleteFrom('workflow_definitions').where('id', '=', id).executeTakeFirst()).numDeletedRows > 0n;
}

export async function definitionHasSchedules(tx: Tx, id: string): Promise<boolean> {
  return (await tx.selectFrom('workflow_schedules').select('id').where('definition_id', '=', id).limit(1).executeTakeFirst()) !== undefined;
}
