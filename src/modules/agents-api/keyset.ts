import { sql, type SelectQueryBuilder } from 'kysely';
import type { DB } from '../../db/index.ts';
import { afterRow } from './cursor-sql.ts';
import type { CursorQuery } from './pagination.ts';

/**
 * One cursor page of rows straight from a single table (spec §4.1): ordered by `keys` (creation time, then id, by
 * default) in the requested order, strictly after the `after` row (cursor-sql.ts), `limit + 1` rows so `cursorPage`
 * can tell whether more exist.
 */
export function keysetRows<T extends keyof DB & string, O>(
  query: SelectQueryBuilder<DB, T, O>,
  table: T,
  cursor: CursorQuery,
  keys: readonly string[] = ['created_at', 'id'],
): Promise<O[]> {
  let q = query;
  if (cursor.after !== undefined) q = q.where(afterRow(table, cursor.after, cursor.order, keys));
  for (const k of keys) q = q.orderBy(sql.ref(k), cursor.order);
  return q.limit(cursor.limit + 1).execute();
}
