import { describe, expect, it } from 'vitest';
import { createSecretBox } from '../../../shared/secret-box.ts';
import { runKey, runProvider } from './run-key.ts';

/** Whose key a run calls its model with, from the profile and the tenant's sealed keys (the flows: test/flows/provider-keys.test.ts). */
describe('the key of a run', () => {
  const box = createSecretBox('run-key-test-secret');
  const sealed = [
    { provider: 'anthropic', sealed: box.seal('sk-ant-own', 'provider_keys:t:anthropic') },
    { provider: 'openai', sealed: box.seal('sk-own', 'provider_keys:t:openai') },
  ];
  const open = (row: { provider: string; sealed: string }) => box.open(row.sealed, `provider_keys:t:${row.provider}`);

  it("names each runtime's provider: general's model prefix, anthropic for Claude Code, openai for Codex", () => {
    expect(runProvider({ runtime: 'general', model: 'openai:gpt-4o' })).toBe('openai');
    expect(runProvider({ runtime: 'general', model: 'openrouter/anthropic/claude-sonnet-4.5' })).toBe('openrouter');
    expect(runProvider({ runtime: 'general', model: 'demo:echo' })).toBe('demo');
    expect(runProvider({ runtime: 'general' })).toBeUndefined();
    expect(runProvider({ runtime: 'runtime_a', model: 'claude-sonnet-4-5' })).toBe('anthropic');
    expect(runProvider({ runtime: 'runtime_a' })).toBe('anthropic');
    expect(runProvider({ runtime: 'runtime_b', model: 'gpt-5.5' })).toBe('openai');
  });

  it("carries the tenant's key for the run's provider as a key-only override, and says the tenant pays", () => {
    expect(runKey({ runtime: 'general', model: 'openai:gpt-4o' }, sealed, open)).toEqual({ keySource: 'tenant', model: { apiKey: 'sk-own' } });
    expect(runKey({ runtime: 'runtime_a' }, sealed, open)).toEqual({ keySource: 'tenant', model: { apiKey: 'sk-ant-own' } });
    expect(runKey({ runtime: 'runtime_b', model: 'gpt-5.5' }, sealed, open)).toEqual({ keySource: 'tenant', model: { apiKey: 'sk-own' } });
  });

  it("leaves the run on the operator's key when the tenant set none for its provider", () => {
    expect(runKey({ runtime: 'general', model: 'openai:gpt-4o' }, [], open)).toEqual({ keySource: 'platform' });
    expect(runKey({ runtime: 'general', model: 'google:gemini-2.5-pro' }, sealed, open)).toEqual({ keySource: 'platform' });
    expect(runKey({ runtime: 'general', model: 'demo:echo' }, sealed, open)).toEqual({ keySource: 'platform' });
  });
});
