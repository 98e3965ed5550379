import { sql, type RawBuilder } from 'kysely';
import { storableJson } from './storable.ts';

/**
 * A jsonb value for inserts and updates that both drivers store the same way: sent as text and cast by the server.
 * (postgres.js serialises a string bound to a jsonb parameter again, which would store a JSON string.) Its strings are
 * in the storage encoding (storable.ts), so a NUL or a lone surrogate anywhere in the value is stored and read back.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the column types (Json<…>) decide what fits
export function jsonb(value: unknown): RawBuilder<any> {
  return sql`cast(cast(${storableJson(value)} as text) as jsonb)`;
}
