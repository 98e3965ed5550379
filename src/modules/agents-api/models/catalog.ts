import { priceOf } from '../extensions/catalog.ts';
import type { Aggregator } from './model-ref.ts';

/**
 * The platform-credit models: the built-in demo model and whatever each operator-configured aggregator lists at its
 * OpenAI-compatible `GET /models` (read with its key, bounded by a timeout, cached for a minute; an aggregator that
 * does not answer contributes nothing). Prices come from the price table, converted to credits (1 credit = 1 US
 * cent); a model missing from the table shows `price: null`.
 */
export interface PlatformModel {
  id: string;
  name: string;
  aggregator: string;
  price: { inputPerMTok: number; outputPerMTok: number; cachedInputPerMTok: number } | null;
}

export interface ModelCatalog {
  creditUnit: string;
  platformModels(): Promise<PlatformModel[]>;
}

const CACHE_MS = 60_000;
const TIMEOUT_MS = 3000;
const toCredits = (usdPerMTok: number) => Math.round(usdPerMTok * 100 * 1000) / 1000;

function priced(aggregator: string, modelId: string, name = modelId): PlatformModel {
  const p = priceOf(modelId);
  return {
    id: `svc/${aggregator}/${modelId}`,
    name,
    aggregator,
    price: p ? { inputPerMTok: toCredits(p.inputPerMTok), outputPerMTok: toCredits(p.outputPerMTok), cachedInputPerMTok: toCredits(p.cachedInputPerMTok) } : null,
  };
}

export function createModelCatalog(aggregators: Readonly<Record<string, Aggregator>>, fetchFn: typeof fetch = fetch): ModelCatalog {
  const cache = new Map<string, { at: number; ids: string[] }>();

  async function listed(name: string, agg: Aggregator): Promise<string[]> {
    const hit = cache.get(name);
    if (hit && Date.now() - hit.at < CACHE_MS) return hit.ids;
    try {
      const res = await fetchFn(`${agg.url}/models`, { headers: agg.key ? { authorization: `Bearer ${agg.key}` } : {}, signal: AbortSignal.timeout(TIMEOUT_MS) });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      const body = (await res.json()) as { data?: Array<{ id?: unknown }> };
      const ids = (body.data ?? []).map((m) => m.id).filter((id): id is string => typeof id === 'string');
      cache.set(name, { at: Date.now(), ids });
      return ids;
    } catch {
      return hit?.ids ?? [];
    }
  }

  return {
    creditUnit: '1 credit = 0.01 USD; prices are credits per million tokens',
    async platformModels() {
      const lists = await Promise.all(Object.entries(aggregators).map(async ([name, agg]) => (await listed(name, agg)).map((id) => priced(name, id))));
      return [priced('demo', 'demo', 'Demo model (built in, offline)'), ...lists.flat()];
    },
  };
}
