import { AppError } from '../../../shared/errors.ts';
import type { ModelOverride } from '../../../contracts/worker.ts';
import { formatModelId, MODEL_PROVIDERS, parseModelId } from '../../../contracts/model-providers.ts';

/**
 * The two model forms of the agents API (seed 001, Agent `model`): `svc/<aggregator>/<model id>` is paid with platform
 * credit and served by an operator-configured OpenAI-compatible aggregator (`svc/demo/<id>` is the built-in demo
 * model); `<provider>/<model id>` (or `<provider>:<model id>`, the form printed) uses the organisation's own provider
 * key. Any other form is a 400 on `model`. At run time a model resolves to the `general` runtime's
 * `<provider>:<model id>` plus, for this run only, the address and key to call it with.
 */
/** Every provider of the general runtime that takes a key (all but the built-in demo model). */
export const BYOK_PROVIDERS: readonly string[] = MODEL_PROVIDERS.filter((p) => p.keyVar !== undefined).map((p) => p.id);
export type ByokProvider = string;

export interface Aggregator {
  url: string;
  key: string | undefined;
}

/** A tenant's own key for a provider, as the provider-keys store (`/api/providers`) hands it out. */
export interface ProviderKey {
  apiKey: string;
  baseUrl?: string;
}
export type ProviderKeyLookup = (tenantId: string, provider: string) => Promise<ProviderKey | undefined>;

export type ModelRef =
  | { kind: 'platform'; aggregator: string; modelId: string }
  | { kind: 'byok'; provider: ByokProvider; modelId: string };

export interface ModelResolver {
  aggregators(): string[];
  /** Parses and checks a model name; throws 400 naming `param` on any other form. */
  parse(model: string, param?: string): ModelRef;
  /** The runtime model and its per-run address and key; throws 400 when the organisation has no key for the provider. */
  resolve(tenantId: string, model: string): Promise<ModelOverride & { model: string }>;
}

export function createModelResolver(deps: { aggregators: Readonly<Record<string, Aggregator>>; providerKeys?: ProviderKeyLookup }): ModelResolver {
  const names = () => ['demo', ...Object.keys(deps.aggregators)];
  const problem = (param: string, model: string, why: string) =>
    new AppError(400, `${param}: ${why} (got "${model}"); expected svc/<aggregator>/<model_id> with aggregator one of ${names().join(', ')}, or <provider>:<model_id> (or <provider>/<model_id>) with provider one of ${BYOK_PROVIDERS.join(', ')}`, {
      code: 'invalid_model',
      extra: { param },
    });

  function parse(model: string, param = 'model'): ModelRef {
    const parts = model.split('/');
    if (parts[0] === 'svc') {
      if (parts.some((p) => p === '' || /\s/.test(p))) throw problem(param, model, 'not a model name');
      if (parts.length < 3) throw problem(param, model, 'a platform model needs an aggregator and a model id');
      const aggregator = parts[1];
      if (!names().includes(aggregator)) throw problem(param, model, `unknown aggregator "${aggregator}"`);
      return { kind: 'platform', aggregator, modelId: parts.slice(2).join('/') };
    }
    const parsed = parseModelId(model);
    if ('problem' in parsed) {
      const sep = model.search(/[:/]/);
      throw problem(param, model, sep > 0 && sep < model.length - 1 && !/\s/.test(model) ? `unknown provider "${model.slice(0, sep)}"` : 'not a model name');
    }
    if (!BYOK_PROVIDERS.includes(parsed.provider)) throw problem(param, model, `unknown provider "${parsed.provider}"`);
    return { kind: 'byok', provider: parsed.provider, modelId: parsed.modelId };
  }

  return {
    aggregators: names,
    parse,
    async resolve(tenantId, model) {
      const ref = parse(model);
      if (ref.kind === 'platform') {
        if (ref.aggregator === 'demo') return { model: `demo:${ref.modelId}` };
        const agg = deps.aggregators[ref.aggregator];
        return { model: `openai-compatible:${ref.modelId}`, baseUrl: agg.url, ...(agg.key ? { apiKey: agg.key } : {}) };
      }
      const key = deps.providerKeys ? await deps.providerKeys(tenantId, ref.provider) : undefined;
      if (!key) {
        throw new AppError(400, `no ${ref.provider} key is set for this organisation: set one with PUT /api/providers/${ref.provider}/key, or use a platform model (svc/<aggregator>/<model_id>)`, {
          code: 'authentication_error',
        });
      }
      return { model: formatModelId(ref), apiKey: key.apiKey, ...(key.baseUrl ? { baseUrl: key.baseUrl } : {}) };
    },
  };
}
