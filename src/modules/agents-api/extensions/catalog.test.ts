import { describe, expect, it } from 'vitest';
import { costMicroUsd, PROVIDERS, priceOf } from './catalog.ts';

describe('model prices', () => {
  it('finds a price from any model form: provider:id, provider/id, dated ids, bare ids', () => {
    expect(priceOf('openai:gpt-4o')).toMatchObject({ id: 'gpt-4o', inputPerMTok: 2.5, outputPerMTok: 10, cachedInputPerMTok: 1.25 });
    expect(priceOf('openai/gpt-4o-mini')).toMatchObject({ inputPerMTok: 0.15, outputPerMTok: 0.6 });
    expect(priceOf('anthropic/claude-sonnet-4-5-20250929')).toMatchObject({ inputPerMTok: 3, outputPerMTok: 15, cachedInputPerMTok: 0.3 });
    expect(priceOf('claude-haiku-4-5')).toMatchObject({ inputPerMTok: 1, outputPerMTok: 5 });
    expect(priceOf('svc/demo/demo')).toMatchObject({ inputPerMTok: 0, outputPerMTok: 0 });
    expect(priceOf('openai-compatible:llama-from-my-basement')).toBeUndefined();
    expect(priceOf('anthropic:gpt-4o')).toBeUndefined(); // a provider prefix restricts the search to that provider
  });

  it("prices the other providers' models at their own list prices, keeping colons and slashes in model ids", () => {
    expect(priceOf('bedrock:anthropic.claude-3-5-sonnet-20241022-v2:0')).toMatchObject({ id: 'anthropic.claude-3-5-sonnet-20241022-v2:0', inputPerMTok: 3 });
    expect(priceOf('openrouter/anthropic/claude-sonnet-4.5')).toMatchObject({ id: 'anthropic/claude-sonnet-4.5', inputPerMTok: 3 });
    expect(priceOf('azure:gpt-4o')).toMatchObject({ inputPerMTok: 2.5 });
    expect(priceOf('google:gemini-2.5-pro')).toMatchObject({ inputPerMTok: 1.25 });
    expect(priceOf('xai:grok-3-mini')).toMatchObject({ inputPerMTok: 0.3 });
    expect(priceOf('groq:llama-3.3-70b-versatile')).toMatchObject({ inputPerMTok: 0.59 });
    expect(priceOf('mistral:codestral-latest')).toMatchObject({ inputPerMTok: 0.3 });
  });

  it('charges cached input at the cached price and counts one micro-dollar per token per USD/Mtok', () => {
    expect(costMicroUsd(priceOf('gpt-4o'), { inputTokens: 1000, outputTokens: 500, cacheReadTokens: 200 })).toBe(800 * 2.5 + 200 * 1.25 + 500 * 10);
    expect(costMicroUsd(undefined, { inputTokens: 1000, outputTokens: 1, cacheReadTokens: 0 })).toBe(0);
  });

  it('lists every provider model with a price from the catalog', () => {
    expect(PROVIDERS.find((p) => p.id === 'openai')!.models.map((m) => m.id)).toContain('gpt-4o');
    expect(PROVIDERS.find((p) => p.id === 'anthropic')!.models.length).toBe(5);
    for (const id of ['google', 'mistral', 'xai', 'groq']) expect(PROVIDERS.find((p) => p.id === id)!.models.length, id).toBeGreaterThan(1);
  });
});
