import type { RunnerInfo } from '../../../contracts/runner.client.ts';

/**
 * `workerPlacement` of a sandbox profile, computed on read from the live runner fleet and never stored: which
 * substrate would run its workers, where that choice came from, and whether any runner can serve it.
 */
export interface WorkerPlacement {
  substrate: string | null;
  source: 'profile' | 'runner-default' | 'none';
  servable: boolean;
  requested?: string;
  detail?: string;
}

export function workerPlacement(profile: { workerMode?: unknown; workerSubstrate?: unknown }, runners: RunnerInfo[]): WorkerPlacement | undefined {
  if (profile.workerMode !== 'sandbox' || runners.length === 0) return undefined;
  const offered = new Set(runners.flatMap((r) => (r.substratesKnown ? r.substrates : [])));
  const requested = typeof profile.workerSubstrate === 'string' ? profile.workerSubstrate : undefined;
  if (requested) {
    return offered.has(requested)
      ? { substrate: requested, source: 'profile', servable: true }
      : { substrate: requested, source: 'profile', servable: false, requested, detail: `no live runner offers substrate ${requested}` };
  }
  const defaults = [...new Set(runners.map((r) => r.defaultSubstrate).filter(Boolean))];
  if (defaults.length === 1) return { substrate: defaults[0], source: 'runner-default', servable: offered.has(defaults[0]) };
  if (defaults.length > 1) return { substrate: null, source: 'runner-default', servable: false, detail: `runners disagree on the default substrate: ${defaults.sort().join(', ')}` };
  return { substrate: null, source: 'none', servable: false, detail: 'no live runner launches sandbox workers' };
}
