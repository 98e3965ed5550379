import { createProviderRegistry, type LanguageModel } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
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

interface ProviderEntry {
  /** Variables without which the provider cannot work; the first missing one is named in the error. */
  required: readonly string[];
  create(env: Env): RegistryProvider;
}

const PROVIDERS: Record<string, ProviderEntry> = {
  openai: {
    required: ['OPENAI_API_KEY'],
    create: (env) => createOpenAI({ apiKey: env.OPENAI_API_KEY, baseURL: env.OPENAI_BASE_URL || undefined }),
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
  return { provider, modelId: id.slice(sep + 1), model: registry.languageModel(id as `${string}:${string}`) };
}
