import type { RunsService, UsageWindow } from '../../conductor/index.ts';
import { costMicroUsd, priceOf } from './catalog.ts';

export type { UsageWindow };

/**
 * Usage of a tenant, read through the conductor's run service from the `usage` events of its runs (the durable event
 * log), with a cost from the price table.
 */
export interface Tokens {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheCreateTokens: number;
  totalTokens: number;
}

function tokens(r: { input: string | number; output: string | number; cache_read: string | number; cache_create: string | number }): Tokens {
  const t = { inputTokens: Number(r.input), outputTokens: Number(r.output), cacheReadTokens: Number(r.cache_read), cacheCreateTokens: Number(r.cache_create) };
  return { ...t, totalTokens: t.inputTokens + t.outputTokens };
}

function priced(modelName: string, t: Tokens) {
  const cost = costMicroUsd(priceOf(modelName), t);
  return { costMicroUsd: cost, costUsd: cost / 1e6, priced: priceOf(modelName) !== undefined };
}

export async function usageTotals(runs: RunsService, tenantId: string, w: UsageWindow) {
  const rows = await runs.usageByModel(tenantId, w);
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

export async function usageRows(runs: RunsService, tenantId: string, w: UsageWindow, page: { limit: number; offset: number }) {
  const rows = await runs.usageEvents(tenantId, w, page);
  const events = rows.slice(0, page.limit).map((r) => {
    const t = tokens(r);
    // `priced: false` marks a model the price catalog does not know (its cost reads 0 but is unknown, not free)
    return { runId: r.run_id, sessionId: r.session_id, seq: r.seq, at: new Date(r.at).toISOString(), model: r.model, ...t, ...priced(r.model, t) };
  });
  return { events, limit: page.limit, offset: page.offset, hasMore: rows.length > page.limit };
}
