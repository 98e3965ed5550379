import { sql, type Kysely } from 'kysely';
import type { DB, Tx } from '../../../db/index.ts';
import { withTenant } from '../../../db/index.ts';
import { costMicroUsd, priceOf } from './catalog.ts';

/**
 * Usage of a tenant, read from the `usage` events of its runs in the durable event log (`run_events`), with a cost
 * from the price table. The model of an event is its own `model` field when present, else the run's, else the one in
 * the session's profile snapshot.
 */
export interface UsageWindow {
  since: Date | undefined;
  until: Date | undefined;
}

export interface Tokens {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheCreateTokens: number;
  totalTokens: number;
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

function tokens(r: { input: string | number; output: string | number; cache_read: string | number; cache_create: string | number }): Tokens {
  const t = { inputTokens: Number(r.input), outputTokens: Number(r.output), cacheReadTokens: Number(r.cache_read), cacheCreateTokens: Number(r.cache_create) };
  return { ...t, totalTokens: t.inputTokens + t.outputTokens };
}

function priced(modelName: string, t: Tokens) {
  const cost = costMicroUsd(priceOf(modelName), t);
  return { costMicroUsd: cost, costUsd: cost / 1e6, priced: priceOf(modelName) !== undefined };
}

export async function usageTotals(db: Kysely<DB>, tenantId: string, w: UsageWindow) {
  const rows = await withTenant(db, tenantId, (tx) =>
    usageEvents(tx, w)
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
      .execute(),
  );
  const byModel = rows.map((r) => {
    const t = tokens(r);
    return { model: r.model, events: Number(r.events), ...t, ...priced(r.model, t) };
  });
  const sum = (k: 'events' | keyof Tokens | 'costMicroUsd') => byModel.reduce((a, r) => a + r[k], 0);
  const cost = sum('costMicroUsd');
  return {
    since: w.since?.toISOString() ?? null,
    until: w.until?.toISOString() ?? null,
    events: sum('events'),
    inputTokens: sum('inputTokens'),
    outputTokens: sum('outputTokens'),
    cacheReadTokens: sum('cacheReadTokens'),
    cacheCreateTokens: sum('cacheCreateTokens'),
    totalTokens: sum('totalTokens'),
    costMicroUsd: cost,
    costUsd: cost / 1e6,
    byModel,
  };
}

export async function usageRows(db: Kysely<DB>, tenantId: string, w: UsageWindow, page: { limit: number; offset: number }) {
  const rows = await withTenant(db, tenantId, (tx) =>
    usageEvents(tx, w)
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
      .execute(),
  );
  const events = rows.slice(0, page.limit).map((r) => {
    const t = tokens(r);
    // `priced: false` marks a model the price catalog does not know (its cost reads 0 but is unknown, not free)
    return { runId: r.run_id, sessionId: r.session_id, seq: r.seq, at: new Date(r.at).toISOString(), model: r.model, ...t, ...priced(r.model, t) };
  });
  return { events, limit: page.limit, offset: page.offset, hasMore: rows.length > page.limit };
}
