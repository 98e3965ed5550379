import { sql, type Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';

/** One counter to take: `limit` requests per `periodMs` for `key` within `scope`. */
export interface Hit {
  scope: string;
  key: string;
  limit: number;
  periodMs: number;
}

export interface Count {
  scope: string;
  key: string;
  /** Requests seen in the current window, this one included (refused ones too). */
  hits: number;
  /** Seconds until the window resets, rounded up (at least 1). */
  resetSeconds: number;
}

/**
 * Takes every counter of one request in one statement, atomically per row under concurrent replicas: a window
 * opens at its first request with `periodMs`; once it has passed, the next request opens a new one. Refused requests
 * count too (the caller compares with its limit). The clock is the database's, so replicas with skewed clocks agree.
 */
export async function takeHits(db: Kysely<DB>, hits: readonly Hit[]): Promise<Count[]> {
  const { rows } = await sql<{ scope: string; key: string; hits: number; reset_seconds: number }>`
    insert into rate_limits as r (scope, key, hits, resets_at)
    select scope, key, 1, now() + period_ms * interval '1 millisecond'
      from unnest(${hits.map((h) => h.scope)}::text[], ${hits.map((h) => h.key)}::text[], ${hits.map((h) => h.periodMs)}::float8[])
        as t(scope, key, period_ms)
    on conflict (scope, key) do update set
      hits = case when r.resets_at <= now() then 1 else least(r.hits + 1, ${sql.raw(String(2 ** 31 - 1))}) end,
      resets_at = case when r.resets_at <= now() then excluded.resets_at else r.resets_at end
    returning scope, key, hits, greatest(1, ceil(extract(epoch from (resets_at - now()))))::int as reset_seconds`.execute(db);
  return rows.map((r) => ({ scope: r.scope, key: r.key, hits: r.hits, resetSeconds: r.reset_seconds }));
}

/** Deletes windows that have passed; returns how many. A job runs it now and then (a live key recreates its row). */
export async function deleteExpired(db: Kysely<DB>): Promise<number> {
  const res = await db.deleteFrom('rate_limits').where('resets_at', '<', sql<Date>`now()`).executeTakeFirst();
  return Number(res.numDeletedRows);
}
