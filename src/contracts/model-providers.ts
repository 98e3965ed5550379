/**
 * The model providers of the `general` runtime, their variables and the one model-id syntax: `<provider>:<model_id>`
 * and `<provider>/<model_id>` both parse (split at the first `:` or `/`, so model ids keep their own colons and
 * slashes: `bedrock:anthropic.claude-sonnet-4-5-v1:0`, `openrouter/anthropic/claude-sonnet-4.5`); `provider:model` is
 * the form printed. Shared by the config (which variables reach a worker), profile validation, the worker's registry
 * and `/api/providers`; nothing here loads a provider package.
 */
export interface ModelProviderInfo {
  id: string;
  name: string;
  /** The AI SDK package that speaks its wire (loaded by the worker on first use only). */
  package: string;
  /** The variable holding its key (what "a key is set" means), or undefined when it needs none. */
  keyVar: string | undefined;
  /** The variable overriding its address, or undefined when it has none (demo). */
  baseUrlVar: string | undefined;
  /** Every variable it reads; only these (and the proxy variables) reach a worker. */
  vars: readonly string[];
  /** Whether runs through it need a key (local OpenAI-compatible servers and the demo model need none). */
  keyRequired: boolean;
}

const p = (id: string, name: string, pkg: string, keyVar: string | undefined, baseUrlVar: string | undefined, more: string[] = []): ModelProviderInfo => ({
  id,
  name,
  package: pkg,
  keyVar,
  baseUrlVar,
  vars: [keyVar, baseUrlVar, ...more].filter((x): x is string => x !== undefined),
  keyRequired: keyVar !== undefined && id !== 'openai-compatible',
});

export const MODEL_PROVIDERS: readonly ModelProviderInfo[] = [
  p('openai', 'OpenAI', '@ai-sdk/openai', 'OPENAI_API_KEY', 'OPENAI_BASE_URL'),
  p('anthropic', 'Anthropic', '@ai-sdk/anthropic', 'ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL'),
  p('google', 'Google Gemini', '@ai-sdk/google', 'GOOGLE_GENERATIVE_AI_API_KEY', 'GOOGLE_GENERATIVE_AI_BASE_URL'),
  // A Bedrock API key (AWS_BEARER_TOKEN_BEDROCK), or SigV4 with an access key pair (and a session token when temporary).
  p('bedrock', 'Amazon Bedrock', '@ai-sdk/amazon-bedrock', 'AWS_BEARER_TOKEN_BEDROCK', 'AWS_ENDPOINT_URL_BEDROCK_RUNTIME', [
    'AWS_REGION',
    'AWS_ACCESS_KEY_ID',
    'AWS_SECRET_ACCESS_KEY',
    'AWS_SESSION_TOKEN',
  ]),
  // Model ids are deployment names; the address is AZURE_BASE_URL, or https://<AZURE_RESOURCE_NAME>.openai.azure.com/openai.
  p('azure', 'Azure OpenAI', '@ai-sdk/azure', 'AZURE_API_KEY', 'AZURE_BASE_URL', ['AZURE_RESOURCE_NAME', 'AZURE_API_VERSION']),
  p('mistral', 'Mistral', '@ai-sdk/mistral', 'MISTRAL_API_KEY', 'MISTRAL_BASE_URL'),
  p('xai', 'xAI Grok', '@ai-sdk/xai', 'XAI_API_KEY', 'XAI_BASE_URL'),
  p('groq', 'Groq', '@ai-sdk/groq', 'GROQ_API_KEY', 'GROQ_BASE_URL'),
  p('openrouter', 'OpenRouter', '@ai-sdk/openai-compatible', 'OPENROUTER_API_KEY', 'OPENROUTER_BASE_URL'),
  p('openai-compatible', 'OpenAI-compatible server (Ollama, vLLM, llama.cpp, LM Studio)', '@ai-sdk/openai-compatible', 'OPENAI_COMPATIBLE_API_KEY', 'OPENAI_COMPATIBLE_BASE_URL'),
  p('demo', 'Demo (built in, offline)', 'built in', undefined, undefined),
];

export const MODEL_PROVIDER_IDS = MODEL_PROVIDERS.map((x) => x.id);

/** Every provider variable a worker may be handed (the config copies only these, plus the proxy variables). */
export const MODEL_PROVIDER_VARS: ReadonlySet<string> = new Set(MODEL_PROVIDERS.flatMap((x) => x.vars));

export function modelProvider(id: string): ModelProviderInfo | undefined {
  return MODEL_PROVIDERS.find((x) => x.id === id);
}

export interface ModelId {
  provider: string;
  modelId: string;
}

/** The expected form, for error messages. */
export const MODEL_ID_FORM = `<provider>:<model_id> (or <provider>/<model_id>) with provider one of ${MODEL_PROVIDER_IDS.join(', ')}`;

/**
 * Splits a model id at its first `:` or `/`. Returns a reason when it has no provider, no model id, or an unknown
 * provider; the caller words the error.
 */
export function parseModelId(id: string): ModelId | { problem: string } {
  const sep = id.search(/[:/]/);
  if (sep <= 0 || sep === id.length - 1 || /\s/.test(id)) return { problem: `invalid model "${id}": expected ${MODEL_ID_FORM}` };
  const provider = id.slice(0, sep);
  if (!modelProvider(provider)) return { problem: `unknown model provider "${provider}" in "${id}": expected ${MODEL_ID_FORM}` };
  return { provider, modelId: id.slice(sep + 1) };
}

/** Whether the variables hold the provider's credentials (for Bedrock: an API key, or an access key pair). */
export function keyIsSet(info: ModelProviderInfo, env: Readonly<Record<string, string | undefined>>): boolean {
  if (info.id === 'bedrock') return !!env.AWS_BEARER_TOKEN_BEDROCK || (!!env.AWS_ACCESS_KEY_ID && !!env.AWS_SECRET_ACCESS_KEY);
  return info.keyVar !== undefined && !!env[info.keyVar];
}

/** The printed form. */
export function formatModelId(m: ModelId): string {
  return `${m.provider}:${m.modelId}`;
}
