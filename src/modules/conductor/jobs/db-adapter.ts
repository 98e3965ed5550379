import type { Db } from 'pg-boss';
import type { Database } from '../../../db/index.ts';

/**
 * pg-boss on our one driver. pg-boss sends SQL text and reads node-postgres-shaped results: `{ rows }` for one
 * statement, an array of `{ rows }` for a multi-statement text (its install and its locked maintenance are whole
 * BEGIN…COMMIT scripts, which `executeText` runs on one reserved connection). No second driver opens connections.
 * A caller's transaction goes through pg-boss's own `fromKysely` adapter (jobs.ts `send({ tx })`).
 */
export function poolAdapter(database: Database): Db {
  return {
    async executeSql(text, values) {
      const result = await database.executeText(text, values);
      return (result.length > 0 && result.every(Array.isArray) ? result.map((rows) => ({ rows })) : { rows: result }) as { rows: unknown[] };
    },
  };
}
