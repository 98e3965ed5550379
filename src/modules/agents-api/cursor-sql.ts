import { sql, type RawBuilder } from 'kysely';

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
