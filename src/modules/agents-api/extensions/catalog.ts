/**
 * The model providers a tenant can bring its own key for, and a small list-price table (USD per million tokens)
 * used to estimate usage cost. Prices are list prices at the time of writing, not a bill; an unknown model costs 0
 * and is reported as unpriced.
 */
export interface ModelPrice {
  id: string;
  name: string;
  inputPerMTok: number;
  outputPerMTok: number;
  cachedInputPerMTok: number;
}

export interface ProviderInfo {
  id: string;
  name: string;
  /** Whether runs through this provider need a key (the demo provider needs none; local servers often none). */
  keyRequired: boolean;
  models: ModelPrice[];
}

const m = (id: string, name: string, input: number, output: number, cached = input / 10): ModelPrice => ({ id, name, inputPerMTok: input, outputPerMTok: output, cachedInputPerMTok: cached });

export const PROVIDERS: readonly ProviderInfo[] = [
  {
    id: 'openai',
    name: 'OpenAI',
    keyRequired: true,
    models: [
      m('gpt-5', 'GPT-5', 1.25, 10, 0.125),
      m('gpt-5-mini', 'GPT-5 mini', 0.25, 2, 0.025),
      m('gpt-5-nano', 'GPT-5 nano', 0.05, 0.4, 0.005),
      m('gpt-4.1', 'GPT-4.1', 2, 8, 0.5),
      m('gpt-4.1-mini', 'GPT-4.1 mini', 0.4, 1.6, 0.1),
      m('gpt-4o', 'GPT-4o', 2.5, 10, 1.25),
      m('gpt-4o-mini', 'GPT-4o mini', 0.15, 0.6, 0.075),
      m('o3', 'o3', 2, 8, 0.5),
      m('o4-mini', 'o4-mini', 1.1, 4.4, 0.275),
    ],
  },
  {
    id: 'anthropic',
    name: 'Anthropic',
    keyRequired: true,
    models: [
      m('claude-opus-4-1', 'Claude Opus 4.1', 15, 75, 1.5),
      m('claude-sonnet-4-5', 'Claude Sonnet 4.5', 3, 15, 0.3),
      m('claude-sonnet-4', 'Claude Sonnet 4', 3, 15, 0.3),
      m('claude-haiku-4-5', 'Claude Haiku 4.5', 1, 5, 0.1),
      m('claude-3-5-haiku', 'Claude Haiku 3.5', 0.8, 4, 0.08),
    ],
  },
  { id: 'openai-compatible', name: 'OpenAI-compatible server (Ollama, vLLM, llama.cpp, LM Studio)', keyRequired: false, models: [] },
  { id: 'demo', name: 'Demo (built in, offline)', keyRequired: false, models: [m('demo', 'Demo model', 0, 0, 0)] },
];

export function findProvider(id: string): ProviderInfo | undefined {
  return PROVIDERS.find((p) => p.id === id);
}

/**
 * The price of a model named in any of the forms runs use (`openai:gpt-4o`, `openai/gpt-4o`, `svc/demo/x`, a bare
 * `claude-sonnet-4-5-20250929`): the catalog model whose id is the longest prefix of the name's last segment.
 */
export function priceOf(model: string): ModelPrice | undefined {
  const bare = model.split(/[:/]/).pop() ?? model;
  const provider = /^([\w-]+)[:/]/.exec(model)?.[1];
  let best: ModelPrice | undefined;
  for (const p of PROVIDERS) {
    if (provider && provider !== 'svc' && findProvider(provider) && p.id !== provider) continue;
    for (const price of p.models) if (bare.startsWith(price.id) && (!best || price.id.length > best.id.length)) best = price;
  }
  return best;
}

/** Cost in micro-USD: one USD per million tokens is exactly one micro-USD per token. */
export function costMicroUsd(price: ModelPrice | undefined, u: { inputTokens: number; outputTokens: number; cacheReadTokens: number }): number {
  if (!price) return 0;
  const uncached = Math.max(0, u.inputTokens - u.cacheReadTokens);
  return Math.round(uncached * price.inputPerMTok + u.cacheReadTokens * price.cachedInputPerMTok + u.outputTokens * price.outputPerMTok);
}
