import { priceTokens, ratesOf } from '../../conductor/index.ts';
import { MODEL_PROVIDERS, parseModelId, type ModelProviderInfo } from '../../../contracts/model-providers.ts';

/**
 * The model providers of the general runtime, with the models we list for each. Prices are not typed
 * here: they come from the maintained catalog behind billing (`@pydantic/genai-prices`), the same one runs are
 * charged from; a model it does not know is reported as unpriced.
 */
export interface ModelPrice {
  id: string;
  name: string;
  inputPerMTok: number;
  outputPerMTok: number;
  cachedInputPerMTok: number;
  /** The model name as it was asked for (what a cost is computed from). */
  ref: string;
}

export interface ProviderInfo extends ModelProviderInfo {
  models: ModelPrice[];
}

function listed(provider: string, ids: Array<[id: string, name: string]>): ModelPrice[] {
  return ids.flatMap(([id, name]) => {
    const rates = ratesOf(`${provider}:${id}`);
    return rates ? [{ id, name, ...rates, ref: `${provider}:${id}` }] : [];
  });
}

/** The models listed per provider (those the price catalog does not know are left out). */
const MODELS: Record<string, Array<[id: string, name: string]>> = {
  openai: [
    ['gpt-5', 'GPT-5'],
    ['gpt-5-mini', 'GPT-5 mini'],
    ['gpt-5-nano', 'GPT-5 nano'],
    ['gpt-4.1', 'GPT-4.1'],
    ['gpt-4.1-mini', 'GPT-4.1 mini'],
    ['gpt-4o', 'GPT-4o'],
    ['gpt-4o-mini', 'GPT-4o mini'],
    ['o3', 'o3'],
    ['o4-mini', 'o4-mini'],
  ],
  anthropic: [
    ['claude-opus-4-1', 'Claude Opus 4.1'],
    ['claude-sonnet-4-5', 'Claude Sonnet 4.5'],
    ['claude-sonnet-4', 'Claude Sonnet 4'],
    ['claude-haiku-4-5', 'Claude Haiku 4.5'],
    ['claude-3-5-haiku', 'Claude Haiku 3.5'],
  ],
  google: [
    ['gemini-2.5-pro', 'Gemini 2.5 Pro'],
    ['gemini-2.5-flash', 'Gemini 2.5 Flash'],
    ['gemini-2.5-flash-lite', 'Gemini 2.5 Flash-Lite'],
  ],
  mistral: [
    ['mistral-large-latest', 'Mistral Large'],
    ['mistral-medium-latest', 'Mistral Medium'],
    ['mistral-small-latest', 'Mistral Small'],
    ['codestral-latest', 'Codestral'],
  ],
  xai: [
    ['grok-4', 'Grok 4'],
    ['grok-3', 'Grok 3'],
    ['grok-3-mini', 'Grok 3 mini'],
  ],
  groq: [
    ['llama-3.3-70b-versatile', 'Llama 3.3 70B'],
    ['llama-3.1-8b-instant', 'Llama 3.1 8B'],
  ],
  demo: [['demo', 'Demo model']],
};

/**
 * Every provider of the general runtime (contracts/model-providers.ts), with the models we list for it; the prices
 * are looked up on the first listing, not at boot (the price catalog is large).
 */
export const PROVIDERS: readonly ProviderInfo[] = MODEL_PROVIDERS.map((p) => {
  let models: ModelPrice[] | undefined;
  return {
    ...p,
    get models() {
      return (models ??= listed(p.id, MODELS[p.id] ?? []));
    },
  };
});

export function findProvider(id: string): ProviderInfo | undefined {
  return PROVIDERS.find((p) => p.id === id);
}

/** The list rates of a model named in any of the forms runs use, or undefined when the catalog does not know it. */
export function priceOf(model: string): ModelPrice | undefined {
  const rates = ratesOf(model);
  if (!rates) return undefined;
  const parsed = parseModelId(model);
  const id = 'problem' in parsed ? (model.split(/[:/]/).pop() ?? model) : parsed.modelId;
  return { id, name: id, ...rates, ref: model };
}

/** Cost in micro-USD of tokens of a priced model (`inputTokens` counts cached input too); 0 for an unpriced one. */
export function costMicroUsd(price: ModelPrice | undefined, u: { inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheCreateTokens?: number }): number {
  if (!price) return 0;
  return priceTokens(price.ref, null, { input: u.inputTokens, output: u.outputTokens, cacheRead: u.cacheReadTokens, cacheWrite: u.cacheCreateTokens ?? 0 }).costMicroUsd;
}
