import { isDeepStrictEqual } from 'node:util';
import type { Tx } from '../../../db/index.ts';
import { jsonb } from '../../../db/index.ts';
import type { Page } from '../../crud/index.ts';

/** SQL for `profile_history` (sql/0018): one row per version of a profile, `{field: {from, to}}`. */
export type Changes = Record<string, { from: unknown; to: unknown }>;

export interface HistoryEntry {
  version: number;
  changedAt: string;
  changedBy: string | null;
  changes: Changes;
}

/** The fields that differ between two specs (`id` and computed fields aside); an absent field reads as null. */
export function diffSpecs(before: Record<string, unknown> | undefined, after: Record<string, unknown>): Changes {
  const skip = new Set(['id', 'pinned', 'workerPlacement']);
  const changes: Changes = {};
  for (const key of new Set([...Object.keys(before ?? {}), ...Object.keys(after)])) {
    if (skip.has(key)) continue;
    const from = before?.[key] ?? null;
    const to = after[key] ?? null;
    if (!isDeepStrictEqual(from, to)) changes[key] = { from, to };
  }
  return changes;
}

export async function insertHistory(tx: Tx, h: { tenantId: string; name: string; version: number; changedBy: string | null; changes: Changes }): Promise<void> {
  await tx
    .insertInto('profile_history')
    .values({ tenant_id: h.tenantId, profile_name: h.name, version: h.version, changed_by: h.changedBy, changes: jsonb(h.changes) })
    .execute();
}

/** Newest first; `limit` pages it (the total is every version). */
export async function listHistory(tx: Tx, name: string, page: Page): Promise<{ items: HistoryEntry[]; total: number }> {
  let q = tx.selectFrom('profile_history').select(['version', 'changed_at', 'changed_by', 'changes']).where('profile_name', '=', name).orderBy('version', 'desc');
  if (page.limit !== undefined) q = q.limit(page.limit).offset(page.offset);
  const rows = await q.execute();
  const total =
    page.limit === undefined
      ? rows.length
      : Number((await tx.selectFrom('profile_history').select((eb) => eb.fn.countAll<number>().as('n')).where('profile_name', '=', name).executeTakeFirstOrThrow()).n);
  return {
    items: rows.map((r) => ({ version: r.version, changedAt: new Date(r.changed_at).toISOString(), changedBy: r.changed_by, changes: r.changes as Changes })),
    total,
  };
}
