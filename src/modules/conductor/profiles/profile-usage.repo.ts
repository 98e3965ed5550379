import { sql } from 'kysely';
import type { Tx } from '../../../db/index.ts';

/**
 * A profile's runs since a time, grouped by the model and runtime that priced them: run counts by status and the
 * tokens of their `usage` events (the durable event log, as billing reads them).
 */
export interface UsageGroup {
  model: string | null;
  runtime: string | null;
  runs: number;
  failed: number;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

export async function profileUsage(tx: Tx, profile: string, since: Date | undefined): Promise<UsageGroup[]> {
  const tokens = (field: string) => sql<string>`coalesce(sum((e.event->'usage'->>${field})::bigint), 0)`;
  const perRun = tx
    .selectFrom('runs as r')
    .leftJoin('run_events as e', (j) => j.onRef('e.run_id', '=', 'r.id').onRef('e.tenant_id', '=', 'r.tenant_id').on(sql<string>`e.event->>'type'`, '=', 'usage'))
    .select(['r.id', 'r.model', 'r.runtime', 'r.status'])
    .select([tokens('inputTokens').as('input'), tokens('outputTokens').as('output'), tokens('cacheReadTokens').as('cache_read'), tokens('cacheCreateTokens').as('cache_write')])
    .where('r.profile', '=', profile)
    .$if(since !== undefined, (q) => q.where('r.started_at', '>=', since!))
    .groupBy(['r.id', 'r.model', 'r.runtime', 'r.status'])
    .as('u');
  const rows = await tx
    .selectFrom(perRun)
    .select(['u.model', 'u.runtime'])
    .select((eb) => [
      eb.fn.countAll<string>().as('runs'),
      sql<string>`count(*) FILTER (WHERE u.status = 'error')`.as('failed'),
      sql<string>`sum(u.input)`.as('input'),
      sql<string>`sum(u.output)`.as('output'),
      sql<string>`sum(u.cache_read)`.as('cache_read'),
      sql<string>`sum(u.cache_write)`.as('cache_write'),
    ])
    .groupBy(['u.model', 'u.runtime'])
    .orderBy('u.model')
    .execute();
  return rows.map((r) => ({
    model: r.model,
    runtime: r.runtime,
    runs: Number(r.runs),
    failed: Number(r.failed),
    input: Number(r.input),
    output: Number(r.output),
    cacheRead: Number(r.cache_read),
    cacheWrite: Number(r.cache_write),
  }));
}
