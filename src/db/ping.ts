import { sql, type Kysely } from 'kysely';
import type { DB } from './types.ts';

/** One round trip to the database (readiness probes). */
export async function pingDatabase(db: Kysely<DB>): Promise<void> {
  await sql`select 1`.execute(db);
}
