import type { Db } from 'pg-boss';

/**
 * The queues subscribed to an event, read from pg-boss's subscription table on the caller's connection. pg-boss's own
 * publish() reads them on its pool: from inside a transaction that holds a pooled connection, that waits for another
 * one, and with every connection held by such a transaction (runs ending under load) nothing moves again.
 */
export async function subscribedQueues(db: Db, schema: string, event: string): Promise<string[]> {
  const { rows } = await db.executeSql(`SELECT name FROM ${schema}.subscription WHERE event = $1 ORDER BY name`, [event]);
  return (rows as Array<{ name: string }>).map((r) => r.name);
}
