import { sql, type RawBuilder } from 'kysely';

/**
 * A jsonb value for inserts and updates that both drivers store the same way: sent as text and cast by the server.
 * (postgres.js serialises a string bound to a jsonb parameter again, which would store a JSON string.)
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the column types (Json<…>) decide what fits
export function jsonb(value: unknown): RawBuilder<any> {
  return sql`cast(cast(${JSON.stringify(value)} as text) as jsonb)`;
}
