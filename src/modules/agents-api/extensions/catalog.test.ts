import { describe, expect, it } from 'vitest';
import { costMicroUsd, priceOf } from './catalog.ts';

describe('model prices', () => {
  it('finds a price from any model form: provider:id, provider/id, dated ids, bare ids', () => {
    expect(priceOf('openai:gpt-4o')?.id).toBe('gpt-4o');
    expect(priceOf('openai/gpt-4o-mini')?.id).toBe('gpt-4o-mini');
    expect(priceOf('anthropic/claude-sonnet-4-5-20250929')?.id).toBe('claude-sonnet-4-5');
    expect(priceOf('claude-haiku-4-5')?.id).toBe('claude-haiku-4-5');
    expect(priceOf('svc/demo/demo')?.id).toBe('demo');
    expect(priceOf('openai-compatible:llama3')).toBeUndefined();
    expect(priceOf('anthropic:gpt-4o')).toBeUndefined(); // a provider prefix restricts the search to that provider
  });

  it('charges cached input at the cached price and counts one micro-dollar per token per USD/Mtok', () => {
    expect(costMicroUsd(priceOf('gpt-4o'), { inputTokens: 1000, outputTokens: 500, cacheReadTokens: 200 })).toBe(800 * 2.5 + 200 * 1.25 + 500 * 10);
    expect(costMicroUsd(undefined, { inputTokens: 1000, outputTokens: 1, cacheReadTokens: 0 })).toBe(0);
  });
});
