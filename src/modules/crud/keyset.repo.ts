import { sql, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import type { DB } from '../../db/index.ts';
import type { CursorQuery } from './cursor-page.ts';

/**
 * The keyset condition of a cursor page: rows strictly after the row whose id is `after`, in `order`, by the given key
 * columns (the last one is the unique tie-breaker). The anchor is read inside SQL so timestamps keep their full
 * precision; an unknown `after` id matches nothing (an empty page).
 */
export function afterRow(table: string, after: string, order: 'asc' | 'desc', keys: readonly string[] = ['created_at', 'id']): RawBuilder<boolean> {
  const cols = sql.join(keys.map((k) => sql.ref(k)));
  const anchor = sql.join(keys.map((k) => sql.ref(`anchor.${k}`)));
  const op = sql.raw(order === 'desc' ? '<' : '>');
  return sql<boolean>`(${cols}) ${op} (select ${anchor} from ${sql.table(table)} as anchor where anchor.id = ${after})`;
}

/**
 * One cursor page of rows straight from a single table (spec §4.1): ordered by `keys` (creation time, then id, by
 * default) in the requested order, strictly after the `after` row, `limit + 1` rows so `cursorPage` can tell whether
 * more exist.
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
