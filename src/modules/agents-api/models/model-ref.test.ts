import { describe, expect, it } from 'vitest';
import { createModelResolver } from './model-ref.ts';

describe('model names of the agents API', () => {
  const models = createModelResolver({
    aggregators: { router: { url: 'https://router.example/v1', key: 'rk' } },
    providerKeys: async (tenant, provider) => (tenant === 't1' && provider === 'anthropic' ? { apiKey: 'ak' } : undefined),
  });

  it('resolves platform models to the aggregator (or the built-in demo) for one run', async () => {
    expect(await models.resolve('t1', 'svc/demo/echo')).toEqual({ model: 'demo:echo' });
    expect(await models.resolve('t1', 'svc/router/openai/gpt-4o')).toEqual({ model: 'openai-compatible:openai/gpt-4o', baseUrl: 'https://router.example/v1', apiKey: 'rk' });
  });

  it("resolves provider models with the organisation's own key, and says how to set a missing one", async () => {
    expect(await models.resolve('t1', 'anthropic/claude-sonnet-4-5')).toEqual({ model: 'anthropic:claude-sonnet-4-5', apiKey: 'ak' });
    await expect(models.resolve('t2', 'anthropic/claude-sonnet-4-5')).rejects.toThrow('PUT /api/providers/anthropic/key');
  });

  it('reads <provider>:<model_id> and <provider>/<model_id> alike, for every provider that takes a key', async () => {
    expect(models.parse('openai:gpt-4o')).toEqual({ kind: 'byok', provider: 'openai', modelId: 'gpt-4o' });
    expect(models.parse('openrouter/anthropic/claude-sonnet-4.5')).toEqual({ kind: 'byok', provider: 'openrouter', modelId: 'anthropic/claude-sonnet-4.5' });
    expect(models.parse('bedrock:anthropic.claude-sonnet-4-5-v1:0')).toEqual({ kind: 'byok', provider: 'bedrock', modelId: 'anthropic.claude-sonnet-4-5-v1:0' });
    expect(await models.resolve('t1', 'anthropic:claude-sonnet-4-5')).toEqual({ model: 'anthropic:claude-sonnet-4-5', apiKey: 'ak' });
    for (const provider of ['google', 'bedrock', 'azure', 'mistral', 'xai', 'groq', 'openrouter']) expect(models.parse(`${provider}/m`)).toMatchObject({ kind: 'byok', provider });
  });

  it('refuses every other form with a 400 that names the parameter', () => {
    for (const name of ['gpt-4o', 'svc/unknown/x', 'svc/demo', 'demo/echo', 'demo:echo', 'nope:x', 'openai/', 'openai:', '/x', 'svc//x']) {
      expect(() => models.parse(name, 'agent.model'), name).toThrow(/^agent\.model: /);
    }
  });
});
