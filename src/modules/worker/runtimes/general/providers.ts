import { createProviderRegistry, type LanguageModel, type streamText } from 'ai';
import { createOpenAI, type OpenAILanguageModelResponsesOptions } from '@ai-sdk/openai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { AppError } from '../../../../shared/errors.ts';
import { demoProvider } from './demo-model.ts';

/**
 * The `general` runtime's provider registry. Model ids are `<provider>:<model_id>`, split on the first `:`.
 * Provider variables come from the config's providerEnv (never process.env), and a missing variable is reported by
 * name before any request is made.
 */
type Env = Readonly<Record<string, string>>;
type RegistryProvider = Parameters<typeof createProviderRegistry>[0][string];
export type ProviderOptions = NonNullable<Parameters<typeof streamText>[0]['providerOptions']>;

interface ProviderEntry {
  /** Variables without which the provider cannot work; the first missing one is named in the error. */
  required: readonly string[];
  create(env: Env): RegistryProvider;
  /** Per-call provider options every turn of this provider sends. */
  callOptions?: ProviderOptions;
}

const PROVIDERS: Record<string, ProviderEntry> = {
  openai: {
    required: ['OPENAI_API_KEY'],
    create: (env) => createOpenAI({ apiKey: env.OPENAI_API_KEY, baseURL: env.OPENAI_BASE_URL || undefined }),
    // With the default store:true, earlier assistant items go out as `item_reference`s to responses kept on OpenAI's
    // side, so an exported history would only replay against the same OpenAI project while it keeps them. With
    // store:false the SDK sends every item in full (and asks for encrypted reasoning), so a bundle is self-contained.
    callOptions: { openai: { store: false } satisfies OpenAILanguageModelResponsesOptions },
  },
  anthropic: {
    required: ['ANTHROPIC_API_KEY'],
    create: (env) => createAnthropic({ apiKey: env.ANTHROPIC_API_KEY, baseURL: env.ANTHROPIC_BASE_URL || undefined }),
  },
  // Local servers (Ollama, vLLM, llama.cpp, LM Studio) often need no key, but they always need an address.
  'openai-compatible': {
    required: ['OPENAI_COMPATIBLE_BASE_URL'],
    create: (env) =>
      createOpenAICompatible({
        name: 'openai-compatible',
        baseURL: env.OPENAI_COMPATIBLE_BASE_URL,
        apiKey: env.OPENAI_COMPATIBLE_API_KEY || undefined,
        includeUsage: true,
      }),
  },
  demo: { required: [], create: () => demoProvider },
};

export const PROVIDER_NAMES = Object.keys(PROVIDERS);

export interface ResolvedModel {
  provider: string;
  modelId: string;
  model: LanguageModel;
  providerOptions: ProviderOptions | undefined;
}

/** The provider variables a per-run override (ModelOverride) sets, by provider: [base URL variable, key variable]. */
const OVERRIDE_ENV: Record<string, readonly [string, string]> = {
  openai: ['OPENAI_BASE_URL', 'OPENAI_API_KEY'],
  anthropic: ['ANTHROPIC_BASE_URL', 'ANTHROPIC_API_KEY'],
  'openai-compatible': ['OPENAI_COMPATIBLE_BASE_URL', 'OPENAI_COMPATIBLE_API_KEY'],
};

/**
 * The provider variables for one run with a model override: the override's base URL and key replace the configured
 * ones of its provider (a key given without a base URL keeps the configured address). The worker's env is untouched.
 */
export function envWithOverride(env: Env, override: { model: string; baseUrl?: string; apiKey?: string } | undefined): Env {
  if (!override) return env;
  const vars = OVERRIDE_ENV[override.model.slice(0, override.model.indexOf(':'))];
  if (!vars) return env;
  const out: Record<string, string> = { ...env };
  if (override.baseUrl) out[vars[0]] = override.baseUrl;
  if (override.apiKey !== undefined) out[vars[1]] = override.apiKey;
  return out;
}

/** Resolves a profile's model id; every failure is a 400-class AppError with a message fit for a terminal event. */
export function resolveModel(env: Env, id: string | undefined): ResolvedModel {
  const form = `expected <provider>:<model_id> with provider one of ${PROVIDER_NAMES.join(', ')}`;
  if (!id) throw new AppError(400, `profile.model is required for the general runtime (${form})`);
  const sep = id.indexOf(':');
  if (sep <= 0 || sep === id.length - 1) throw new AppError(400, `invalid model "${id}": ${form}`);
  const provider = id.slice(0, sep);
  const entry = Object.hasOwn(PROVIDERS, provider) ? PROVIDERS[provider] : undefined;
  if (!entry) throw new AppError(400, `unknown model provider "${provider}" in "${id}": ${form}`);
  const missing = entry.required.find((name) => !env[name]);
  if (missing) throw new AppError(400, `${missing} is not set (needed by model provider ${provider})`);
  const registry = createProviderRegistry({ [provider]: entry.create(env) });
  return { provider, modelId: id.slice(sep + 1), model: registry.languageModel(id as `${string}:${string}`), providerOptions: entry.callOptions };
}
