import { MODEL_PROVIDER_VARS } from '../contracts/model-providers.ts';
import { ConfigError, url } from './parse.ts';

/** What reaches a worker's providers: each provider's own variables (contracts/model-providers.ts), the aggregators', the proxy. */
const PROVIDER_ENV = (name: string) => MODEL_PROVIDER_VARS.has(name) || /^SVC_AGGREGATOR_[A-Z0-9_]+_(API_KEY|BASE_URL|URL|KEY|MODEL)$|^(HTTPS?_PROXY|NO_PROXY)$/.test(name);

/** The variables sandbox and outbound workers are given for their model providers, read once here. */
export function providerEnvOf(env: Record<string, string | undefined>): Record<string, string> {
  const providerEnv: Record<string, string> = {};
  for (const [k, val] of Object.entries(env)) if (val !== undefined && PROVIDER_ENV(k)) providerEnv[k] = val;
  return providerEnv;
}

/**
 * Operator-configured OpenAI-compatible aggregators behind `svc/<name>/<model id>` models: SVC_AGGREGATOR_<NAME>_URL
 * and SVC_AGGREGATOR_<NAME>_KEY (name lowercased, `_` → `-`). `demo` is built in and needs none.
 */
export function aggregatorsOf(env: Record<string, string | undefined>): Record<string, { url: string; key: string | undefined }> {
  const out: Record<string, { url: string; key: string | undefined }> = {};
  for (const [k, raw] of Object.entries(env)) {
    const m = /^SVC_AGGREGATOR_([A-Z0-9_]+)_URL$/.exec(k);
    if (!m || !raw) continue;
    const name = m[1].toLowerCase().replace(/_/g, '-');
    if (name === 'demo') throw new ConfigError(k, '"demo" is the built-in aggregator and cannot be configured');
    out[name] = { url: url(k, raw)!, key: env[`SVC_AGGREGATOR_${m[1]}_KEY`] || undefined };
  }
  return out;
}
