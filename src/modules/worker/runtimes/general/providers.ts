import type { LanguageModel, streamText } from 'ai';
import { AppError } from '../../../../shared/errors.ts';
import { MODEL_ID_FORM, modelProvider, parseModelId } from '../../../../contracts/model-providers.ts';
import { demoProvider } from './demo-model.ts';

/**
 * The `general` runtime's providers (the list and its variables: contracts/model-providers.ts). Model ids are
 * `<provider>:<model_id>` or `<provider>/<model_id>`. Each provider's AI SDK package is imported on its first use, so
 * a worker that never runs a Bedrock model never loads Bedrock (nor its AWS event-stream codec). Provider variables
 * come from the config's providerEnv, never process.env: every setting a package would otherwise read from the
 * environment is passed explicitly, and a missing one is reported by name before any request is made.
 */
type Env = Readonly<Record<string, string>>;
export type ProviderOptions = NonNullable<Parameters<typeof streamText>[0]['providerOptions']>;
type Factory = (env: Env) => { languageModel(modelId: string): LanguageModel };

interface ProviderEntry {
  /** The first variable (or alternative) the provider cannot work without, or undefined when all are there. */
  missing(env: Env): string | undefined;
  /** Imports the provider package (on first use only) and returns its factory. */
  load(): Promise<Factory>;
  /** Per-call provider options every turn of this provider sends. */
  callOptions?: ProviderOptions;
}

const need = (...names: string[]) => (env: Env) => names.find((name) => !env[name]);
const opt = (value: string | undefined) => value || undefined;
// The OpenAI and Anthropic packages read *_BASE_URL from process.env when no baseURL is given: give their defaults.

// With the default store:true, the Responses wires send earlier assistant items as `item_reference`s to responses
// kept on the provider's side, so an exported history would only replay there while it keeps them. With store:false
// every item goes in full (and encrypted reasoning is asked for), so a bundle is self-contained.
const noStore = (name: string): ProviderOptions => ({ [name]: { store: false } });

const PROVIDERS: Record<string, ProviderEntry> = {
  openai: {
    missing: need('OPENAI_API_KEY'),
    load: async () => {
      const { createOpenAI } = await import('@ai-sdk/openai');
      return (env) => createOpenAI({ apiKey: env.OPENAI_API_KEY, baseURL: opt(env.OPENAI_BASE_URL) ?? 'https://api.openai.com/v1' });
    },
    callOptions: noStore('openai'),
  },
  anthropic: {
    missing: need('ANTHROPIC_API_KEY'),
    load: async () => {
      const { createAnthropic } = await import('@ai-sdk/anthropic');
      return (env) => createAnthropic({ apiKey: env.ANTHROPIC_API_KEY, baseURL: opt(env.ANTHROPIC_BASE_URL) ?? 'https://api.anthropic.com/v1' });
    },
  },
  google: {
    missing: need('GOOGLE_GENERATIVE_AI_API_KEY'),
    load: async () => {
      const { createGoogleGenerativeAI } = await import('@ai-sdk/google');
      return (env) => createGoogleGenerativeAI({ apiKey: env.GOOGLE_GENERATIVE_AI_API_KEY, baseURL: opt(env.GOOGLE_GENERATIVE_AI_BASE_URL) });
    },
  },
  bedrock: {
    missing(env) {
      if (!env.AWS_BEARER_TOKEN_BEDROCK) {
        if (!env.AWS_ACCESS_KEY_ID) return 'AWS_BEARER_TOKEN_BEDROCK or AWS_ACCESS_KEY_ID';
        if (!env.AWS_SECRET_ACCESS_KEY) return 'AWS_SECRET_ACCESS_KEY';
        if (!env.AWS_REGION) return 'AWS_REGION'; // SigV4 signs for a region
      }
      return env.AWS_REGION || env.AWS_ENDPOINT_URL_BEDROCK_RUNTIME ? undefined : 'AWS_REGION or AWS_ENDPOINT_URL_BEDROCK_RUNTIME';
    },
    load: async () => {
      const { createAmazonBedrock } = await import('@ai-sdk/amazon-bedrock');
      return (env) =>
        createAmazonBedrock({
          // '' (not undefined) keeps the package from reading AWS_BEARER_TOKEN_BEDROCK from the process environment.
          apiKey: env.AWS_BEARER_TOKEN_BEDROCK ?? '',
          region: opt(env.AWS_REGION),
          accessKeyId: opt(env.AWS_ACCESS_KEY_ID),
          secretAccessKey: opt(env.AWS_SECRET_ACCESS_KEY),
          sessionToken: opt(env.AWS_SESSION_TOKEN),
          baseURL: opt(env.AWS_ENDPOINT_URL_BEDROCK_RUNTIME) ?? `https://bedrock-runtime.${env.AWS_REGION}.amazonaws.com`,
        });
    },
  },
  azure: {
    missing: (env) => need('AZURE_API_KEY')(env) ?? (env.AZURE_BASE_URL || env.AZURE_RESOURCE_NAME ? undefined : 'AZURE_RESOURCE_NAME or AZURE_BASE_URL'),
    load: async () => {
      const { createAzure } = await import('@ai-sdk/azure');
      return (env) =>
        createAzure({
          apiKey: env.AZURE_API_KEY,
          resourceName: opt(env.AZURE_RESOURCE_NAME),
          baseURL: opt(env.AZURE_BASE_URL),
          apiVersion: opt(env.AZURE_API_VERSION),
        });
    },
    callOptions: noStore('azure'),
  },
  mistral: {
    missing: need('MISTRAL_API_KEY'),
    load: async () => {
      const { createMistral } = await import('@ai-sdk/mistral');
      return (env) => createMistral({ apiKey: env.MISTRAL_API_KEY, baseURL: opt(env.MISTRAL_BASE_URL) });
    },
  },
  xai: {
    missing: need('XAI_API_KEY'),
    load: async () => {
      const { createXai } = await import('@ai-sdk/xai');
      return (env) => createXai({ apiKey: env.XAI_API_KEY, baseURL: opt(env.XAI_BASE_URL) });
    },
    callOptions: noStore('xai'),
  },
  groq: {
    missing: need('GROQ_API_KEY'),
    load: async () => {
      const { createGroq } = await import('@ai-sdk/groq');
      return (env) => createGroq({ apiKey: env.GROQ_API_KEY, baseURL: opt(env.GROQ_BASE_URL) });
    },
  },
  // OpenRouter serves the OpenAI Chat Completions wire; the AI SDK's own OpenAI-compatible package speaks it, so no
  // third package (and no third copy of the Chat Completions parser) is loaded for it.
  openrouter: {
    missing: need('OPENROUTER_API_KEY'),
    load: async () => {
      const { createOpenAICompatible } = await import('@ai-sdk/openai-compatible');
      return (env) =>
        createOpenAICompatible({ name: 'openrouter', baseURL: opt(env.OPENROUTER_BASE_URL) ?? 'https://openrouter.ai/api/v1', apiKey: env.OPENROUTER_API_KEY, includeUsage: true });
    },
  },
  // Local servers (Ollama, vLLM, llama.cpp, LM Studio) often need no key, but they always need an address.
  'openai-compatible': {
    missing: need('OPENAI_COMPATIBLE_BASE_URL'),
    load: async () => {
      const { createOpenAICompatible } = await import('@ai-sdk/openai-compatible');
      return (env) =>
        createOpenAICompatible({ name: 'openai-compatible', baseURL: env.OPENAI_COMPATIBLE_BASE_URL, apiKey: opt(env.OPENAI_COMPATIBLE_API_KEY), includeUsage: true });
    },
  },
  demo: {
    missing: () => undefined,
    load: async () => () => demoProvider,
  },
};

export const PROVIDER_NAMES = Object.keys(PROVIDERS);

const loaded = new Map<string, Promise<Factory>>();
function factoryOf(provider: string): Promise<Factory> {
  let f = loaded.get(provider);
  if (!f) {
    f = PROVIDERS[provider].load();
    f.catch(() => loaded.delete(provider)); // a failed import is tried again next time
    loaded.set(provider, f);
  }
  return f;
}

/** What a run's model settings (the /v1 agent's `reasoning` and `service_tier`) become for one provider. */
export interface ModelSettings {
  reasoningEffort?: string;
  reasoningSummary?: string;
  serviceTier?: string;
}

/**
 * The effort goes to the AI SDK's own `reasoning` call option, which every provider package maps to its wire
 * (OpenAI `reasoning.effort`, Anthropic thinking budgets, Gemini thinking levels; ignored where unsupported). Summaries
 * and service tiers only exist on the OpenAI Responses wire (openai, azure): there they are provider options.
 */
export function applySettings(provider: string, base: ProviderOptions | undefined, settings: ModelSettings | undefined): { reasoning: ReasoningLevel | undefined; providerOptions: ProviderOptions | undefined } {
  const reasoning = settings?.reasoningEffort as ReasoningLevel | undefined;
  if (!settings || (provider !== 'openai' && provider !== 'azure')) return { reasoning, providerOptions: base };
  const extra = {
    ...(settings.reasoningSummary ? { reasoningSummary: settings.reasoningSummary } : {}),
    ...(settings.serviceTier ? { serviceTier: settings.serviceTier } : {}),
  };
  if (Object.keys(extra).length === 0) return { reasoning, providerOptions: base };
  return { reasoning, providerOptions: { ...base, [provider]: { ...base?.[provider], ...extra } } };
}
type ReasoningLevel = NonNullable<Parameters<typeof streamText>[0]['reasoning']>;

export interface ResolvedModel {
  provider: string;
  modelId: string;
  model: LanguageModel;
  providerOptions: ProviderOptions | undefined;
}

/**
 * The provider variables for one run with a model override: the override's base URL and key replace the configured
 * ones of the run's provider (`model`: the run's model id, the override's or the profile's; a key given without a base
 * URL keeps the configured address). The worker's env is untouched.
 */
export function envWithOverride(env: Env, override: { baseUrl?: string; apiKey?: string } | undefined, model: string | undefined): Env {
  if (!override || !model) return env;
  const parsed = parseModelId(model);
  const info = 'problem' in parsed ? undefined : modelProvider(parsed.provider);
  if (!info?.baseUrlVar || !info.keyVar) return env;
  const out: Record<string, string> = { ...env };
  if (override.baseUrl) out[info.baseUrlVar] = override.baseUrl;
  if (override.apiKey !== undefined) out[info.keyVar] = override.apiKey;
  return out;
}

/** Resolves a profile's model id; every failure is a 400-class AppError with a message fit for a terminal event. */
export async function resolveModel(env: Env, id: string | undefined): Promise<ResolvedModel> {
  if (!id) throw new AppError(400, `profile.model is required for the general runtime (expected ${MODEL_ID_FORM})`);
  const parsed = parseModelId(id);
  if ('problem' in parsed) throw new AppError(400, parsed.problem);
  const { provider, modelId } = parsed;
  const entry = PROVIDERS[provider];
  const missing = entry.missing(env);
  if (missing) throw new AppError(400, `${missing} is not set (needed by model provider ${provider})`);
  return { provider, modelId, model: await modelOf(env, provider, modelId), providerOptions: entry.callOptions };
}

/**
 * Language models built for the worker's own provider variables, by provider and model id: a model object holds no
 * per-call state, and building one costs (the OpenAI-compatible model builds its response schemas in its constructor).
 * A run with a model override brings variables of its own and gets a model of its own.
 */
const models = new WeakMap<Env, Map<string, LanguageModel>>();
const MODELS_MAX = 64;

async function modelOf(env: Env, provider: string, modelId: string): Promise<LanguageModel> {
  const factory = await factoryOf(provider);
  let byId = models.get(env);
  if (!byId) models.set(env, (byId = new Map()));
  const key = `${provider}\u0000${modelId}`;
  let model = byId.get(key);
  if (!model) {
    if (byId.size >= MODELS_MAX) byId.clear();
    byId.set(key, (model = factory(env).languageModel(modelId)));
  }
  return model;
}
