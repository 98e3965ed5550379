import { availableParallelism } from 'node:os';
import { DEFAULT_CEILINGS, DEFAULT_LIMITS, defaultTotalCpus, LIMIT_ENV, LIMIT_FLOORS, LIMIT_KEYS, LIMITS_MODES, type LimitsConfig, type SandboxLimits } from '../contracts/sandbox-limits.ts';
import { ConfigError, pick } from './parse.ts';

/**
 * What an agent may consume (contracts/sandbox-limits.ts): SVC_SANDBOX_LIMITS (`require`, the default outside dev: a
 * runner that cannot enforce a limit refuses sandbox work; `best-effort`, the dev default; `off`), and per limit
 * SVC_SANDBOX_<NAME> (the default) and SVC_SANDBOX_<NAME>_MAX (the ceiling overrides are held to);
 * SVC_SANDBOX_TOTAL_CPUS, the CPUs all sandboxes of a runner may use together.
 */
export function sandboxLimitsConfig(env: Record<string, string | undefined>, appEnv: string): LimitsConfig {
  const mode = pick('SVC_SANDBOX_LIMITS', env.SVC_SANDBOX_LIMITS, LIMITS_MODES, appEnv === 'dev' ? 'best-effort' : 'require');
  const read = (name: string, fallback: number, key: (typeof LIMIT_KEYS)[number]): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    const whole = key !== 'cpus';
    if (!Number.isFinite(n) || (whole && !Number.isInteger(n)) || n < LIMIT_FLOORS[key]) {
      throw new ConfigError(name, `got "${raw}"; allowed: ${whole ? 'a whole number' : 'a number'} of at least ${LIMIT_FLOORS[key]}`);
    }
    return n;
  };
  const defaults = {} as SandboxLimits;
  const ceilings = {} as SandboxLimits;
  for (const k of LIMIT_KEYS) {
    ceilings[k] = read(`${LIMIT_ENV[k]}_MAX`, DEFAULT_CEILINGS[k], k);
    defaults[k] = read(LIMIT_ENV[k], Math.min(DEFAULT_LIMITS[k], ceilings[k]), k);
    if (defaults[k] > ceilings[k]) throw new ConfigError(LIMIT_ENV[k], `got ${defaults[k]}, above ${LIMIT_ENV[k]}_MAX (${ceilings[k]})`);
  }
  // all sandboxes of the runner together; unset: the host's CPUs but one and a half (the runner's own), at least half of one
  const rawTotal = env.SVC_SANDBOX_TOTAL_CPUS;
  let totalCpus = defaultTotalCpus(availableParallelism());
  if (rawTotal !== undefined && rawTotal !== '') {
    totalCpus = Number(rawTotal);
    if (!Number.isFinite(totalCpus) || totalCpus < 0.1) throw new ConfigError('SVC_SANDBOX_TOTAL_CPUS', `got "${rawTotal}"; allowed: a number of CPUs of at least 0.1 (all sandboxes of the runner together)`);
  }
  return { mode, defaults, ceilings, totalCpus };
}
