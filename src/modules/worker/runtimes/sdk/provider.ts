import type { WorkerRunRequest } from '../../../../contracts/worker.ts';

/**
 * The model and provider variables of one SDK run. A per-run model override (the /v1 agents API: a tenant's own key,
 * or the operator's aggregator) replaces the profile's model and, for this run only, the provider's base URL and
 * key; the worker's configuration is untouched.
 */
export interface ProviderVars {
  baseUrl: string;
  apiKey: string;
}

export function runModel(req: WorkerRunRequest): string | undefined {
  return req.modelOverride?.model ?? req.profile.model;
}

export function runProviderEnv(env: Readonly<Record<string, string>>, req: WorkerRunRequest, vars: ProviderVars): Readonly<Record<string, string>> {
  const override = req.modelOverride;
  if (!override) return env;
  const out: Record<string, string> = { ...env };
  if (override.baseUrl) out[vars.baseUrl] = override.baseUrl;
  if (override.apiKey !== undefined) out[vars.apiKey] = override.apiKey;
  return out;
}
