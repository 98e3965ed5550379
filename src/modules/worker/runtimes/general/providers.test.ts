import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { formatModelId, MODEL_PROVIDER_IDS, parseModelId } from '../../../../contracts/model-providers.ts';
import { envWithOverride, PROVIDER_NAMES, resolveModel } from './providers.ts';

const run = promisify(execFile);

/**
 * Resolves the given model ids in a fresh Node process and prints which AI SDK packages it imported, seen by a module
 * resolve hook (so nothing this test file imported counts).
 */
async function packagesLoadedFor(env: Record<string, string>, ids: string[]): Promise<string[]> {
  const script = `
    import { registerHooks } from 'node:module';
    const seen = new Set();
    registerHooks({ resolve(specifier, context, next) { if (/^@ai-sdk\\/[^/]+$/.test(specifier)) seen.add(specifier); return next(specifier, context); } });
    const { resolveModel } = await import(${JSON.stringify(new URL('./providers.ts', import.meta.url).href)});
    for (const id of ${JSON.stringify(ids)}) await resolveModel(${JSON.stringify(env)}, id);
    console.log(JSON.stringify([...seen].sort()));
  `;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { env: { PATH: process.env.PATH ?? '' } });
  return JSON.parse(stdout.trim().split('\n').at(-1)!);
}

const ENV = {
  OPENAI_API_KEY: 'k',
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'a',
  AWS_SECRET_ACCESS_KEY: 's',
  GOOGLE_GENERATIVE_AI_API_KEY: 'g',
};

describe('the provider registry of the general runtime', () => {
  it('knows exactly the providers the rest of svc lists', () => {
    expect(PROVIDER_NAMES).toEqual(MODEL_PROVIDER_IDS);
    expect(PROVIDER_NAMES).toEqual(['openai', 'anthropic', 'google', 'bedrock', 'azure', 'mistral', 'xai', 'groq', 'openrouter', 'openai-compatible', 'demo']);
  });

  it('loads a provider package on its first use only: a worker that never runs Bedrock never imports it', async () => {
    const openaiOnly = await packagesLoadedFor(ENV, ['openai:gpt-5', 'demo:echo']);
    expect(openaiOnly).toContain('@ai-sdk/openai');
    for (const pkg of ['@ai-sdk/amazon-bedrock', '@ai-sdk/google', '@ai-sdk/azure', '@ai-sdk/mistral', '@ai-sdk/xai', '@ai-sdk/groq', '@ai-sdk/anthropic', '@ai-sdk/openai-compatible']) {
      expect(openaiOnly).not.toContain(pkg);
    }
    const withBedrock = await packagesLoadedFor(ENV, ['openai:gpt-5', 'bedrock/anthropic.claude-sonnet-4-5-v1:0']);
    expect(withBedrock).toContain('@ai-sdk/amazon-bedrock');
    expect(withBedrock).not.toContain('@ai-sdk/google');
  });

  it('parses provider:model and provider/model alike, splitting at the first separator, and prints provider:model', async () => {
    for (const [id, provider, modelId] of [
      ['openai:gpt-5', 'openai', 'gpt-5'],
      ['openai/gpt-5', 'openai', 'gpt-5'],
      ['bedrock:anthropic.claude-sonnet-4-5-v1:0', 'bedrock', 'anthropic.claude-sonnet-4-5-v1:0'],
      ['openrouter/anthropic/claude-sonnet-4.5', 'openrouter', 'anthropic/claude-sonnet-4.5'],
      ['openai-compatible:llama3.1:8b', 'openai-compatible', 'llama3.1:8b'],
      ['groq/meta-llama/llama-4-scout', 'groq', 'meta-llama/llama-4-scout'],
    ]) {
      expect(parseModelId(id), id).toEqual({ provider, modelId });
      expect(formatModelId({ provider, modelId })).toBe(`${provider}:${modelId}`);
      const resolved = await resolveModel({ ...ENV, OPENROUTER_API_KEY: 'o', OPENAI_COMPATIBLE_BASE_URL: 'http://127.0.0.1:1/v1', GROQ_API_KEY: 'q' }, id);
      expect(resolved).toMatchObject({ provider, modelId });
      expect((resolved.model as { modelId: string }).modelId).toBe(modelId);
    }
  });

  it('names the form, the unknown provider, or the missing variable before any request', async () => {
    await expect(resolveModel(ENV, 'gpt-5')).rejects.toThrow(/^invalid model "gpt-5": expected <provider>:<model_id> \(or <provider>\/<model_id>\) with provider one of openai, anthropic, google/);
    await expect(resolveModel(ENV, 'openai:')).rejects.toThrow(/^invalid model "openai:"/);
    await expect(resolveModel(ENV, 'vertex:gemini-2.5-pro')).rejects.toThrow(/^unknown model provider "vertex" in "vertex:gemini-2.5-pro"/);
    await expect(resolveModel({}, 'mistral/mistral-large-latest')).rejects.toThrow('MISTRAL_API_KEY is not set (needed by model provider mistral)');
    await expect(resolveModel({}, 'xai:grok-4')).rejects.toThrow('XAI_API_KEY is not set');
    await expect(resolveModel({}, 'google:gemini-2.5-pro')).rejects.toThrow('GOOGLE_GENERATIVE_AI_API_KEY is not set');
    await expect(resolveModel({}, 'openrouter:x/y')).rejects.toThrow('OPENROUTER_API_KEY is not set');
    await expect(resolveModel({ AZURE_API_KEY: 'z' }, 'azure:my-deployment')).rejects.toThrow('AZURE_RESOURCE_NAME or AZURE_BASE_URL is not set (needed by model provider azure)');
    await expect(resolveModel({}, 'bedrock:m')).rejects.toThrow('AWS_BEARER_TOKEN_BEDROCK or AWS_ACCESS_KEY_ID is not set');
    await expect(resolveModel({ AWS_ACCESS_KEY_ID: 'a' }, 'bedrock:m')).rejects.toThrow('AWS_SECRET_ACCESS_KEY is not set');
    await expect(resolveModel({ AWS_ACCESS_KEY_ID: 'a', AWS_SECRET_ACCESS_KEY: 's' }, 'bedrock:m')).rejects.toThrow('AWS_REGION is not set');
    await expect(resolveModel({ AWS_BEARER_TOKEN_BEDROCK: 'b' }, 'bedrock:m')).rejects.toThrow('AWS_REGION or AWS_ENDPOINT_URL_BEDROCK_RUNTIME is not set');
    await expect(resolveModel({ AWS_BEARER_TOKEN_BEDROCK: 'b', AWS_REGION: 'eu-west-1' }, 'bedrock:m')).resolves.toMatchObject({ provider: 'bedrock' });
  });

  it("puts a per-run key and address on the model's own provider variables, in either model form", () => {
    const env = { GROQ_API_KEY: 'server', GROQ_BASE_URL: 'http://groq', MISTRAL_API_KEY: 'm' };
    expect(envWithOverride(env, { apiKey: 'tenant' }, 'groq/llama-3.3-70b-versatile')).toEqual({ ...env, GROQ_API_KEY: 'tenant' });
    expect(envWithOverride(env, { apiKey: 'g', baseUrl: 'http://g' }, 'google:gemini-2.5-pro')).toEqual({ ...env, GOOGLE_GENERATIVE_AI_API_KEY: 'g', GOOGLE_GENERATIVE_AI_BASE_URL: 'http://g' });
    expect(envWithOverride(env, { apiKey: 'x' }, 'demo:echo')).toBe(env);
  });
});
