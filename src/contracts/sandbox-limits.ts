import * as v from 'valibot';

/**
 * What an agent may consume: the limits on every command, stdio MCP server, environment setup command and sandbox
 * worker it starts. One shape everywhere: the operator's defaults and ceilings (SVC_SANDBOX_<NAME>, SVC_SANDBOX_<NAME>_MAX),
 * a tenant's ceilings (`PUT /api/tenants/{id}/limits`), a profile's `limits`, a /v1 environment's `config.limits`
 * (the same keys in snake_case). The effective limits of a session are the profile's (or environment's) overrides over
 * the operator's defaults, each held to the lower of the operator's and the tenant's ceiling.
 */
export const LIMIT_KEYS = ['memoryMiB', 'cpus', 'pids', 'wallSeconds', 'cpuSeconds', 'fileMiB', 'diskMiB', 'outputBytes', 'openFiles'] as const;
export type LimitKey = (typeof LIMIT_KEYS)[number];
export type SandboxLimits = Record<LimitKey, number>;
export type SandboxLimitsOverride = Partial<SandboxLimits>;

/** The snake_case name of each key (the /v1 environments' `config.limits`). */
export const LIMIT_SNAKE: Record<LimitKey, string> = {
  memoryMiB: 'memory_mib',
  cpus: 'cpus',
  pids: 'pids',
  wallSeconds: 'wall_seconds',
  cpuSeconds: 'cpu_seconds',
  fileMiB: 'file_mib',
  diskMiB: 'disk_mib',
  outputBytes: 'output_bytes',
  openFiles: 'open_files',
};

/** The environment variable of each key: SVC_SANDBOX_<NAME> is the default, SVC_SANDBOX_<NAME>_MAX the ceiling. */
export const LIMIT_ENV: Record<LimitKey, string> = {
  memoryMiB: 'SVC_SANDBOX_MEMORY_MIB',
  cpus: 'SVC_SANDBOX_CPUS',
  pids: 'SVC_SANDBOX_PIDS',
  wallSeconds: 'SVC_SANDBOX_WALL_SECONDS',
  cpuSeconds: 'SVC_SANDBOX_CPU_SECONDS',
  fileMiB: 'SVC_SANDBOX_FILE_MIB',
  diskMiB: 'SVC_SANDBOX_DISK_MIB',
  outputBytes: 'SVC_SANDBOX_OUTPUT_BYTES',
  openFiles: 'SVC_SANDBOX_OPEN_FILES',
};

/** Operator defaults when SVC_SANDBOX_<NAME> is unset. */
export const DEFAULT_LIMITS: SandboxLimits = {
  memoryMiB: 1024,
  cpus: 1,
  pids: 256,
  wallSeconds: 300,
  cpuSeconds: 300,
  fileMiB: 1024,
  diskMiB: 2048,
  outputBytes: 64 * 1024,
  openFiles: 1024,
};

/** Operator ceilings when SVC_SANDBOX_<NAME>_MAX is unset. */
export const DEFAULT_CEILINGS: SandboxLimits = {
  memoryMiB: 8192,
  cpus: 4,
  pids: 4096,
  wallSeconds: 3600,
  cpuSeconds: 3600,
  fileMiB: 8192,
  diskMiB: 16384,
  outputBytes: 1024 * 1024,
  openFiles: 65536,
};

/** The lowest value each key accepts anywhere (below these nothing useful runs). */
export const LIMIT_FLOORS: SandboxLimits = {
  memoryMiB: 16,
  cpus: 0.01,
  pids: 8,
  wallSeconds: 1,
  cpuSeconds: 1,
  fileMiB: 1,
  diskMiB: 16,
  outputBytes: 1024,
  openFiles: 32,
};

/** Units for messages: `memory limit 512 MiB reached`. */
export const LIMIT_UNITS: Record<LimitKey, string> = {
  memoryMiB: 'MiB',
  cpus: 'CPUs',
  pids: 'processes',
  wallSeconds: 's',
  cpuSeconds: 's of CPU',
  fileMiB: 'MiB',
  diskMiB: 'MiB',
  outputBytes: 'bytes',
  openFiles: 'files',
};

/** The name of each limit in messages and in `limit_exceeded.limit` / `svc_sandbox_limit_kills_total{limit}`. */
export const LIMIT_LABEL: Record<LimitKey, string> = {
  memoryMiB: 'memory',
  cpus: 'cpu',
  pids: 'pids',
  wallSeconds: 'wall time',
  cpuSeconds: 'cpu time',
  fileMiB: 'file size',
  diskMiB: 'disk',
  outputBytes: 'output',
  openFiles: 'open files',
};

export const LIMITS_MODES = ['require', 'best-effort', 'off'] as const;
export type LimitsMode = (typeof LIMITS_MODES)[number];

/** The operator's side: SVC_SANDBOX_LIMITS and the defaults and ceilings per key. */
export interface LimitsConfig {
  mode: LimitsMode;
  defaults: SandboxLimits;
  ceilings: SandboxLimits;
  /**
   * SVC_SANDBOX_TOTAL_CPUS: the CPUs every sandbox of a runner may use together (a CPU quota on the runner's whole
   * cgroup subtree), so the runner, its workers and its database keep the rest. Unset: defaultTotalCpus().
   */
  totalCpus?: number;
}

/**
 * The host's CPU count minus one and a half, at least 0.5: what the runner, its workers and its database keep to serve
 * every tenant's runs while sandboxes spin. Measured with `npm run bench:noisy` on two CPUs: keeping one back let
 * another tenant's p99 grow 2.8 times beside a hostile tenant, keeping one and a half 1.8 times.
 */
export function defaultTotalCpus(hostCpus: number): number {
  return Math.max(0.5, hostCpus - 1.5);
}

const whole = new Set<LimitKey>(['memoryMiB', 'pids', 'wallSeconds', 'cpuSeconds', 'fileMiB', 'diskMiB', 'outputBytes', 'openFiles']);

function limitValue(key: LimitKey, name: string) {
  const floor = LIMIT_FLOORS[key];
  return v.pipe(
    v.number(`${name}: a number`),
    v.check((n) => Number.isFinite(n) && (!whole.has(key) || Number.isInteger(n)), `${name}: ${whole.has(key) ? 'a whole number' : 'a finite number'}`),
    v.minValue(floor, `${name}: at least ${floor}`),
  );
}

/** A profile's `limits` (and a tenant's ceilings): any subset of the keys, nothing else. */
export const SandboxLimitsOverrideSchema = v.strictObject(
  Object.fromEntries(LIMIT_KEYS.map((k) => [k, v.optional(limitValue(k, k))])) as { [K in LimitKey]: v.OptionalSchema<ReturnType<typeof limitValue>, undefined> },
  `unknown limit; allowed: ${LIMIT_KEYS.join(', ')}`,
);

/** A /v1 environment's `config.limits`: the same keys in snake_case. */
export const SnakeLimitsSchema = v.strictObject(
  Object.fromEntries(LIMIT_KEYS.map((k) => [LIMIT_SNAKE[k], v.optional(limitValue(k, LIMIT_SNAKE[k]))])) as Record<string, v.OptionalSchema<ReturnType<typeof limitValue>, undefined>>,
  `unknown limit; allowed: ${LIMIT_KEYS.map((k) => LIMIT_SNAKE[k]).join(', ')}`,
);

export function fromSnake(snake: Record<string, number | undefined>): SandboxLimitsOverride {
  const out: SandboxLimitsOverride = {};
  for (const k of LIMIT_KEYS) if (snake[LIMIT_SNAKE[k]] !== undefined) out[k] = snake[LIMIT_SNAKE[k]];
  return out;
}

/** The first key of `override` above `ceiling`, as a message naming it (`memoryMiB 9000 is above the ceiling 8192`), or undefined. */
export function aboveCeiling(override: SandboxLimitsOverride, ceilings: SandboxLimitsOverride, names: Record<LimitKey, string> | undefined = undefined, whose = 'the operator'): string | undefined {
  for (const k of LIMIT_KEYS) {
    const value = override[k];
    const ceiling = ceilings[k];
    if (value !== undefined && ceiling !== undefined && value > ceiling) return `${names?.[k] ?? k} ${value} is above ${whose}'s ceiling ${ceiling}`;
  }
  return undefined;
}

/** The lower of two sets of ceilings, key by key (a tenant's within the operator's). */
export function lowerCeilings(a: SandboxLimits, b: SandboxLimitsOverride | undefined): SandboxLimits {
  const out = { ...a };
  for (const k of LIMIT_KEYS) if (b?.[k] !== undefined) out[k] = Math.min(out[k], b[k]);
  return out;
}

/**
 * The effective limits: each override over the operator's default, every key held to `ceilings` (the operator's,
 * lowered by the tenant's with lowerCeilings). Later overrides win.
 */
export function effectiveLimits(config: Pick<LimitsConfig, 'defaults'>, ceilings: SandboxLimits, ...overrides: Array<SandboxLimitsOverride | undefined>): SandboxLimits {
  const out = { ...config.defaults };
  for (const o of overrides) for (const k of LIMIT_KEYS) if (o?.[k] !== undefined) out[k] = o[k];
  for (const k of LIMIT_KEYS) out[k] = Math.min(out[k], ceilings[k]);
  return out;
}

/** How each limit is enforced on a runner: `cgroup-v1`, `cgroup-v2`, `rlimit`, `loop-ext4`, `container`, `timer`, `runner`, or `none`. */
export type LimitEnforcement = Record<LimitKey, string>;

/** The report of `GET /runner/info` (`limits`), `/api/topology`, `/readyz` and `svc doctor`. */
export interface LimitsReport {
  mode: LimitsMode;
  enforced: LimitEnforcement;
  /** What cannot be enforced here and why (`memory: no writable cgroup (v1 memory controller or v2 memory.max)`). */
  missing: string[];
  defaults: SandboxLimits;
  ceilings: SandboxLimits;
  /** The CPUs all of this runner's sandboxes may use together (SVC_SANDBOX_TOTAL_CPUS), where a CPU cgroup holds them. */
  totalCpus?: number;
}

/** Where a tripped limit was: a `run_command`, a stdio MCP server, a /v1 environment setup command, a sandbox worker. */
export type LimitScope = 'command' | 'mcp' | 'setup' | 'worker';

/** A tripped limit: the run event `limit_exceeded` carries these fields, and a tool error carries them as `limit`. */
export interface LimitExceeded {
  limit: string;
  key: LimitKey;
  value: number;
  scope: LimitScope;
}

/** `memory limit 512 MiB reached: killed` */
export function limitMessage(e: Pick<LimitExceeded, 'key' | 'value'>, outcome = 'killed'): string {
  return `${LIMIT_LABEL[e.key]} limit ${e.value} ${LIMIT_UNITS[e.key]} reached: ${outcome}`;
}

export function limitExceeded(key: LimitKey, value: number, scope: LimitScope): LimitExceeded {
  return { limit: LIMIT_LABEL[key], key, value, scope };
}
