import { priceTokens, ratesOf } from '../../conductor/index.ts';

/**
 * The model providers a tenant can bring its own key for, with the models we list for each. Prices are not typed
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

export interface ProviderInfo {
  id: string;
  name: string;
  /** Whether runs through this provider need a key (the demo provider needs none; local servers often none). */
  keyRequired: boolean;
  models: ModelPrice[];
}

function listed(provider: string, ids: Array<[id: string, name: string]>): ModelPrice[] {
  return ids.flatMap(([id, name]) => {
    const rates = ratesOf(`${provider}:${id}`);
    return rates ? [{ id, name, ...rates, ref: `${provider}:${id}` }] : [];
  });
}

export const PROVIDERS: readonly ProviderInfo[] = [
  {
    id: 'openai',
    name: 'OpenAI',
    keyRequired: true,
    models: listed('openai', [
      ['gpt-5', 'GPT-5'],
      ['gpt-5-mini', 'GPT-5 mini'],
      ['gpt-5-nano', 'GPT-5 nano'],
      ['gpt-4.1', 'GPT-4.1'],
      ['gpt-4.1-mini', 'GPT-4.1 mini'],
      ['gpt-4o', 'GPT-4o'],
      ['gpt-4o-mini', 'GPT-4o mini'],
      ['o3', 'o3'],
      ['o4-mini', 'o4-mini'],
    ]),
  },
  {
    id: 'anthropic',
    name: 'Anthropic',
    keyRequired: true,
    models: listed('anthropic', [
      ['claude-opus-4-1', 'Claude Opus 4.1'],
      ['claude-sonnet-4-5', 'Claude Sonnet 4.5'],
      ['claude-sonnet-4', 'Claude Sonnet 4'],
      ['claude-haiku-4-5', 'Claude Haiku 4.5'],
      ['claude-3-5-haiku', 'Claude Haiku 3.5'],
    ]),
  },
  { id: 'openai-compatible', name: 'OpenAI-compatible server (Ollama, vLLM, llama.cpp, LM Studio)', keyRequired: false, models: [] },
  { id: 'demo', name: 'Demo (built in, offline)', keyRequired: false, models: listed('demo', [['demo', 'Demo model']]) },
];

export function findProvider(id: string): ProviderInfo | undefined {
  return PROVIDERS.find((p) => p.id === id);
}

/** The list rates of a model named in any of the forms runs use, or undefined when the catalog does not know it. */
export function priceOf(model: string): ModelPrice | undefined {
  const rates = ratesOf(model);
  if (!rates) return undefined;
  const id = model.split(/[:/]/).pop() ?? model;
  return { id, name: id, ...rates, ref: model };
}

/** Cost in micro-USD of tokens of a priced model (`inputTokens` counts cached input too); 0 for an unpriced one. */
export function costMicroUsd(price: ModelPrice | undefined, u: { inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheCreateTokens?: number }): number {
  if (!price) return 0;
  return priceTokens(price.ref, null, { input: u.inputTokens, output: u.outputTokens, cacheRead: u.cacheReadTokens, cacheWrite: u.cacheCreateTokens ?? 0 }).costMicroUsd;
}
