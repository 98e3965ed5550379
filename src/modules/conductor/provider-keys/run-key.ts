import type { ModelOverride } from '../../../contracts/worker.ts';
import { parseModelId } from '../../../contracts/model-providers.ts';
import type { SealedKey } from './provider-keys.repo.ts';

/**
 * Whose key a run calls its model with, the one rule on every surface (POST /api/runs, delegated sub-runs,
 * automations, workflow nodes, the chat gateway; the /v1 agents API resolves its `<provider>/<id>` models the same
 * way before it starts a run): the tenant's own key for the run's provider when it set one (`keySource: 'tenant'`,
 * never charged platform credit), else the operator's (`platform`). The key travels with the run only, as its model
 * override: the runner forwards it to the worker in the run request, nothing stores or logs it.
 */
export interface RunKey {
  keySource: 'platform' | 'tenant';
  /** The run's model override carrying the tenant's key; undefined on the operator's key. */
  model?: ModelOverride;
}

/** The provider a profile's runs call: `general` names it in its model; Claude Code speaks to anthropic, Codex to openai. */
export function runProvider(profile: { runtime: string; model?: string }): string | undefined {
  if (profile.runtime === 'runtime_a') return 'anthropic';
  if (profile.runtime === 'runtime_b') return 'openai';
  if (!profile.model) return undefined;
  const parsed = parseModelId(profile.model);
  return 'problem' in parsed ? undefined : parsed.provider;
}

/** `sealed`: the tenant's keys as read with the profile (runs.repo.ts), usually none; `open` decrypts one (ProviderKeys.open). */
export function runKey(profile: { runtime: string; model?: string }, sealed: readonly SealedKey[], open: (row: SealedKey) => string): RunKey {
  if (sealed.length === 0) return { keySource: 'platform' };
  const provider = runProvider(profile);
  const row = provider === undefined ? undefined : sealed.find((k) => k.provider === provider);
  if (!row) return { keySource: 'platform' };
  // the key alone: the profile's model and the operator's address for its provider stay (as on /v1)
  return { keySource: 'tenant', model: { apiKey: open(row) } };
}
