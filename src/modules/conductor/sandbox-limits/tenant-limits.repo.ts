import type { Tx } from '../../../db/index.ts';
import { jsonb } from '../../../db/index.ts';

/** SQL for a tenant's sandbox ceilings (sql/0025: `tenants.sandbox_limits`). */
export async function selectSandboxLimits(tx: Tx, tenantId: string): Promise<{ limits: Record<string, unknown>; deleted: boolean } | undefined> {
  const row = await tx.selectFrom('tenants').select(['sandbox_limits', 'deleted_at']).where('id', '=', tenantId).executeTakeFirst();
  return row && { limits: (row.sandbox_limits ?? {}) as Record<string, unknown>, deleted: row.deleted_at !== null };
}

/** Replaces them; false when there is no such tenant (or it was deleted). */
export async function updateSandboxLimits(tx: Tx, tenantId: string, limits: Record<string, number>): Promise<boolean> {
  const row = await tx
    .updateTable('tenants')
    .set({ sandbox_limits: jsonb(limits), updated_at: new Date() })
    .where('id', '=', tenantId)
    .where('deleted_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** Every profile spec of the tenant (in its transaction), to send them again once its ceilings changed. */
export async function tenantProfileSpecs(tx: Tx): Promise<Array<Record<string, unknown>>> {
  const rows = await tx.selectFrom('profiles').select('spec').execute();
  return rows.map((r) => r.spec as Record<string, unknown>);
}
