import { sql } from 'kysely';
import type { Tx } from '../../../db/index.ts';

/**
 * The `usage` events of a tenant's runs in the durable event log, for the agents API's usage report. The model of an
 * event is its own `model` field when present, else the run's, else the one in the session's profile snapshot.
 */
export interface UsageWindow {
  since: Date | undefined;
  until: Date | undefined;
}

/** Token counts as the database sums them (bigint arrives as a string). */
export interface UsageCounts {
  input: string | number;
  output: string | number;
  cache_read: string | number;
  cache_create: string | number;
}

const at = sql<Date>`(e.event->>'ts')::timestamptz`;
const num = (field: string) => sql<string>`coalesce((e.event->'usage'->>${field})::bigint, 0)`;
const model = sql<string>`coalesce(e.event->>'model', r.sub_task->>'model', s.profile_snapshot->>'model', 'unknown')`;

function usageEvents(tx: Tx, w: UsageWindow) {
  let q = tx
    .selectFrom('run_events as e')
    .innerJoin('runs as r', (j) => j.onRef('r.tenant_id', '=', 'e.tenant_id').onRef('r.id', '=', 'e.run_id'))
    .leftJoin('sessions as s', 's.id', 'r.session_id')
    .where(sql<string>`e.event->>'type'`, '=', 'usage');
  if (w.since) q = q.where(at, '>=', w.since);
  if (w.until) q = q.where(at, '<', w.until);
  return q;
}

/** Per model: how many usage events and their summed tokens, ordered by model. */
export function usageByModel(tx: Tx, w: UsageWindow): Promise<Array<UsageCounts & { model: string; events: string }>> {
  return usageEvents(tx, w)
    .select([
      model.as('model'),
      sql<string>`count(*)`.as('events'),
      sql<string>`sum(${num('inputTokens')})`.as('input'),
      sql<string>`sum(${num('outputTokens')})`.as('output'),
      sql<string>`sum(${num('cacheReadTokens')})`.as('cache_read'),
      sql<string>`sum(${num('cacheCreateTokens')})`.as('cache_create'),
    ])
    .groupBy(model)
    .orderBy(model)
    .execute();
}

/** Usage events newest first, `limit + 1` rows from `offset` (the extra row tells whether more exist). */
export function usageEventRows(tx: Tx, w: UsageWindow, page: { limit: number; offset: number }) {
  return usageEvents(tx, w)
    .select([
      'e.run_id',
      'e.seq',
      'r.session_id',
      at.as('at'),
      model.as('model'),
      num('inputTokens').as('input'),
      num('outputTokens').as('output'),
      num('cacheReadTokens').as('cache_read'),
      num('cacheCreateTokens').as('cache_create'),
    ])
    .orderBy(at, 'desc')
    .orderBy('e.run_id', 'desc')
    .orderBy('e.seq', 'desc')
    .limit(page.limit + 1)
    .offset(page.offset)
    .execute();
}

export type UsageEventRow = Awaited<ReturnType<typeof usageEventRows>>[number];
