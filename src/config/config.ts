import { join, relative, resolve, isAbsolute } from 'node:path';
import { WORKER_MODES, RUNTIMES, type WorkerMode, type Runtime } from '../contracts/worker.ts';
import type { LogLevel } from '../shared/log.ts';
import type { PrivateAddresses } from '../shared/egress/index.ts';
import { billingConfig, type BillingConfig } from './billing.config.ts';
import type { LimitsConfig } from '../contracts/sandbox-limits.ts';
import { ConfigError, int, pick, url } from './parse.ts';
import { sandboxLimitsConfig } from './sandbox-limits.config.ts';
import { containerConfig, type ContainerConfig } from './container.config.ts';
import { notificationsConfig, type NotificationsConfig } from './notifications.config.ts';
import { otelOf } from './otel.config.ts';
import { memoryConfig, type MemoryConfig } from './memory.config.ts';
import { privateAddressesOf } from './private-addresses.config.ts';
import { aggregatorsOf, providerEnvOf } from './providers.config.ts';
import { parseRoles, type RoleName } from './roles.config.ts';
// Only the roles table's data is read here (it imports nothing at run time but its modules' lazy builds).
import { roleTraits } from '../app/roles.ts';

/**
 * The frozen configuration of one svc process. `loadConfig(env, flags)` is the only reader of process.env; every
 * module gets its slice from here, and tests pass plain objects.
 */
export interface Config {
  roles: readonly RoleName[];
  host: string;
  port: number;
  env: string;
  dataDir: string;
  /**
   * Where generated secrets live (pepper, run-token key, secrets key, internal token): `<SVC_DATA_DIR>/secrets`, mode
   * 0700, outside the runner's data folder and never mounted into a sandbox.
   */
  secretsDir: string;
  /** undefined: embedded PostgreSQL under dataDir/pg; 'memory': a throwaway embedded cluster; otherwise a postgres:// URL. */
  databaseUrl: string | undefined;
  /** The embedded cluster: its OS user when svc runs as root (SVC_PG_OS_USER) and `name=value` overrides of its postgresql.conf (SVC_PG_SETTINGS). */
  embeddedPostgres: { osUser: string; settings: readonly string[] };
  logLevel: LogLevel;
  /**
   * The V8 heap of `svc serve` (src/shared/heap.ts): SVC_HEAP_YOUNG_MIB caps the young generation, 16 MiB by default
   * (V8 alone grows it to 128 MiB under load: most of the all-in-one server's RSS peak in `npm run bench`, garbage not
   * collected yet), and SVC_HEAP_GROWING_PERCENT how far the old one grows past what it keeps; 0 leaves V8's own sizing
   * (the old generation's default). Each is 0 when NODE_OPTIONS sets the matching V8 flag.
   */
  heap: { youngMiB: number; growingPercent: number };
  bodyLimitBytes: number;
  /** What an agent may consume: SVC_SANDBOX_LIMITS and SVC_SANDBOX_* (sandbox-limits.config.ts). */
  sandboxLimits: LimitsConfig;
  /** Multipart uploads on /v1/files and /v1/skills. */
  uploadLimitBytes: number;
  identity: {
    pepper: string | undefined;
    bootstrapToken: string | undefined;
    adminTenant: string | undefined;
    keyEnv: string;
    jwtIssuer: string | undefined;
    jwtAudience: string | undefined;
    jwksUrl: string | undefined;
    runTokenSecret: string | undefined;
    /**
     * SVC_RUN_TOKEN_TTL_S: how long a run token lives (default 900 s). The runner renews it while the run runs, so a
     * run may last longer; a token that leaks stays usable this long at most.
     */
    runTokenTtlSeconds: number;
    /** SVC_SECRETS_KEY: the key that provider keys and vault credentials are encrypted with at rest (generated and kept in SVC_DATA_DIR in dev). */
    secretsKey: string | undefined;
  };
  /**
   * SVC_INTERNAL_TOKEN: what conductor → runner calls carry. Required outside dev where roles are split; in dev it is
   * generated and kept in the secrets folder, so split roles on one machine sharing SVC_DATA_DIR agree on it.
   */
  internalToken: string | undefined;
  /**
   * OpenTelemetry: the OTEL_* variables when they ask for trace export (an OTLP endpoint, or OTEL_TRACES_EXPORTER
   * `otlp`/`console`, and OTEL_SDK_DISABLED not `true`), else undefined: no SDK is loaded (src/shared/tracing).
   */
  otel?: Readonly<Record<string, string>>;
  conductor: {
    runners: readonly string[];
    /** Stable id of this conductor process (SVC_INSTANCE_ID); random per boot when unset. */
    instanceId: string | undefined;
    /** How often runners are probed and restarted ones get profiles and pools back. */
    reconcileMs: number;
    /** Heartbeat lease on the runs this conductor drives; runs of an expired lease end `interrupted`. */
    leaseTtlMs: number;
    /**
     * SVC_RUN_WRITE_RETRY_MS: how long a run-event write that fails is retried before the run ends with an error
     * (right after its last stored event, so the log never has a gap).
     */
    runWriteRetryMs: number;
  };
  runner: {
    /** The URL by which conductors reach this runner; its SHA-256 prefix is the runner hash. */
    publicUrl: string | undefined;
    workerUrl: string | undefined;
    workerUrlByRuntime: Readonly<Partial<Record<Runtime, string>>>;
    stateCapBytes: number;
    /** Root of the runner's VirtualFS (profile homes, session scratch, pool areas): SVC_RUNNER_DATA_DIR, default <SVC_DATA_DIR>/runner. */
    dataDir: string;
    /**
     * Conductor base URL for the tools that call back into it (delegate, notify) in split roles: SVC_CONDUCTOR_URL. The
     * runner also announces itself there when it starts, so conductors restore it at once.
     */
    conductorUrl: string | undefined;
    /**
     * SVC_RUNNER_ADOPT_GRACE_MS: how long a run whose conductor went away keeps running, waiting for another conductor
     * to re-attach (adopt it), before it is cancelled (default 60 s; longer than the conductor lease).
     */
    adoptGraceMs: number;
    /**
     * SVC_SANDBOX: `bwrap` (default) runs every command an agent runs inside bubblewrap; `off` is the operator's
     * explicit opt-out (commands run unsandboxed as the runner's user, and `@exec` profiles are accepted anyway).
     */
    sandbox: SandboxMode;
    /** The server's PATH, where `bwrap` is looked up. */
    searchPath: string;
    /** SVC_WORKER_SUBSTRATE: where sandbox sessions' workers run when the profile names no `workerSubstrate` (default `process`). */
    workerSubstrate?: string;
    /** SVC_WORKER_IDLE_MS: an idle sandbox worker is paused (state exported, process stopped) after this long (default 5 min). */
    workerIdleMs?: number;
    /** SVC_WORKER_POLL_MS: how long a sandbox worker's `next-run` long-poll waits before 204 (default 25 s). */
    workerPollMs?: number;
    /** SVC_WORKER_START_TIMEOUT_MS: a sandbox worker that has not polled this long after launch is stopped and its run fails (default 60 s). */
    workerStartTimeoutMs?: number;
    /** SVC_WORKER_TOKEN_SECRET: the key worker tokens are signed with (at least 32 bytes; generated per process in dev). */
    workerTokenSecret?: string;
    /** The model provider variables sandbox workers are given (their own provider's only) and reach through the runner. */
    providerEnv?: Readonly<Record<string, string>>;
    /** SVC_PRIVATE_ADDRESSES again: sandbox workers are started with it. */
    privateAddresses?: PrivateAddresses;
    /** The `container` substrate; absent unless the operator asked for it (SVC_WORKER_SUBSTRATE=container or SVC_WORKER_IMAGE). */
    container?: ContainerConfig;
  };
  worker: {
    mode: WorkerMode;
    stateDir: string;
    stepCount: number;
    /** SVC_MODEL_STALL_TIMEOUT_MS: a model call that sends no output for this long ends the run as stalled. */
    modelStallTimeoutMs: number;
    childEnvAllow: readonly string[];
    /** The host variables SDK child processes may inherit: PATH plus the `childEnvAllow` names, read once here. */
    hostEnv: Readonly<Record<string, string>>;
    allowHostTools: boolean;
    runnerUrl: string | undefined;
    workerToken: string | undefined;
    sessionId: string | undefined;
    protocol: number;
    /**
     * SVC_WORKER_RELAY (`<port>:<unix socket>`), set by the runner's process substrate: inside a sandbox without network
     * the outbound worker relays 127.0.0.1:<port> of its own loopback to the runner's callback socket.
     */
    relay?: { port: number; socketPath: string };
    /** Provider variables (OPENAI_API_KEY, ANTHROPIC_BASE_URL, …) passed through to the runtimes. */
    providerEnv: Readonly<Record<string, string>>;
    /** `otel` again: Claude Code and Codex get these variables so their own spans join the run's trace. */
    otel?: Readonly<Record<string, string>>;
    /** SVC_PRIVATE_ADDRESSES again: the policy of the tenants' MCP servers this worker connects to (absent: allow). */
    privateAddresses?: PrivateAddresses;
  };
  /** The /v1 agents API (conductor role). */
  agents: {
    /** Requests per minute per API key (SVC_RATE_LIMIT_PER_KEY, default 300) and per organisation (SVC_RATE_LIMIT_PER_ORG, default 600). */
    rateLimitPerKey: number;
    rateLimitPerOrg: number;
    /** Period of `: keep-alive` comments on session event streams (SVC_SSE_KEEPALIVE_MS, default 15 s). */
    keepAliveMs: number;
    /** How long a client-executed function call of a turn may wait for its tool_result (SVC_AGENT_TURN_DEADLINE_MS, default 1 h). */
    turnDeadlineMs: number;
    /**
     * Operator-configured OpenAI-compatible aggregators behind `svc/<name>/<model id>` models: SVC_AGGREGATOR_<NAME>_URL
     * and SVC_AGGREGATOR_<NAME>_KEY (name lowercased, `_` → `-`). `demo` is built in and needs none.
     */
    aggregators: Readonly<Record<string, { url: string; key: string | undefined }>>;
  };
  /** What the `svc` CLI signs in through and reads (conductor role): device login, spend caps, connected apps. */
  cli: {
    /** Lifetime of a device-login code: SVC_DEVICE_CODE_TTL_MS, default 15 minutes (the seed's value; tests shorten it). */
    deviceCodeTtlMs: number;
    /** System default monthly spend cap in USD cents (SVC_SPEND_CAP_MONTHLY_CENTS, default 10000 = $100; 0: no cap). */
    monthCapCents: number;
    /** Daily spend window in USD cents, operator-set only (SVC_SPEND_CAP_DAILY_CENTS, default 2500 = $25; 0: no cap). */
    dayCapCents: number;
    /** Connected-app providers whose OAuth client is configured: SVC_CONNECTED_APP_<NAME>_CLIENT_ID and _CLIENT_SECRET. */
    connectedApps: readonly string[];
  };
  /** Billing (conductor role): see billing/billing.config.ts. */
  billing: BillingConfig;
  /** The chat gateway's public base URL (SVC_CHAT_PUBLIC_URL): published agents show `<url>/chat/<slug>` when set. */
  chatPublicUrl: string | undefined;
  /** Notification deliveries (conductor role): see notifications/. */
  notifications: NotificationsConfig;
  /** Memory stores (conductor role): the operator's ceilings on every store's caps, and how long old versions stay. */
  memory: MemoryConfig;
  /**
   * SVC_APPROVAL_TIMEOUT_S: how long a tool call under an `ask` permission waits for a person before it counts as
   * denied (`expired`); default 86400 (24 h), a profile's `approvalTimeoutSeconds` overrides it. While calls are held
   * on the runner, a wait ends after at most 55 minutes whatever this says (contracts/approvals.ts).
   */
  approvalTimeoutSeconds: number;
  /**
   * SVC_PRIVATE_ADDRESSES: the address policy of every URL a tenant supplies (webhooks, MCP servers, JWKS documents;
   * src/shared/egress). `deny` (the default outside dev) refuses loopback, private, link-local and other internal
   * addresses, as written (400) and at connect time; `allow` (the dev default, where fakes and receivers run on the
   * same machine) lets them through. SVC_PRIVATE_MCP and SVC_NOTIFY_PRIVATE_WEBHOOKS are its older names.
   */
  privateAddresses: PrivateAddresses;
}

export const SANDBOX_MODES = ['bwrap', 'off'] as const;
export type SandboxMode = (typeof SANDBOX_MODES)[number];

export { ConfigError };
export { ROLE_NAMES, type RoleName } from './roles.config.ts';
export type { ContainerConfig, MemoryConfig, NotificationsConfig };

export interface Flags {
  role?: string;
  port?: string | number;
  host?: string;
}

function keyToken(name: string, raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!/^ao_[a-z0-9]+_[A-Za-z0-9]{16,}$/.test(raw)) throw new ConfigError(name, 'a tenant key of the form ao_<env>_<random> (random: at least 16 letters or digits)');
  return raw;
}

function relayOf(raw: string | undefined): Config['worker']['relay'] {
  if (raw === undefined || raw === '') return undefined;
  const m = /^(\d{1,5}):(\/.+)$/.exec(raw);
  if (!m || Number(m[1]) < 1 || Number(m[1]) > 65535) throw new ConfigError('SVC_WORKER_RELAY', `got "${raw}"; allowed: <port>:<absolute unix socket path>`);
  return { port: Number(m[1]), socketPath: m[2] };
}

/** Validates everything once. Throws ConfigError naming the variable and what is allowed. */
export function loadConfig(env: Record<string, string | undefined>, flags: Flags = {}): Config {
  const roles = parseRoles(flags.role ?? env.SVC_ROLE ?? 'all');
  const traits = roleTraits(roles);
  const port = int(flags.port !== undefined ? '--port' : 'PORT', flags.port !== undefined ? String(flags.port) : env.PORT, traits.defaultPort, 0, 65535);
  const host = flags.host ?? env.SVC_HOST ?? '127.0.0.1';
  if (!host) throw new ConfigError('SVC_HOST (--host)', 'a host name or address');
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl && databaseUrl !== 'memory' && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL', 'unset (embedded), "memory", or a postgres:// URL');
  }
  const pgSettings = (env.SVC_PG_SETTINGS ?? '').split(/\s+/).filter(Boolean);
  if (pgSettings.some((x) => !/^[a-z_][a-z0-9_.]*=\S+$/i.test(x))) throw new ConfigError('SVC_PG_SETTINGS', 'space-separated name=value PostgreSQL settings, e.g. "shared_buffers=128MB max_connections=100"');
  const pgOsUser = env.SVC_PG_OS_USER || 'nobody';
  if (!/^[a-z_][a-z0-9_-]*\$?$/i.test(pgOsUser)) throw new ConfigError('SVC_PG_OS_USER', 'an OS user name');
  const appEnv = env.AGENT_ORC_ENV || 'dev';
  if (!/^[a-z0-9]+$/.test(appEnv)) throw new ConfigError('AGENT_ORC_ENV', 'lowercase letters and digits, e.g. dev, live, test');
  const pepper = env.AGENT_API_KEY_PEPPER || undefined;
  if (pepper !== undefined && pepper.length < 16) throw new ConfigError('AGENT_API_KEY_PEPPER', 'at least 16 characters');
  for (const name of appEnv === 'dev' ? [] : traits.requiredOutsideDev) {
    if (!env[name]) throw new ConfigError(name, `required when AGENT_ORC_ENV is "${appEnv}" (not dev)`);
  }
  const secretsKey = env.SVC_SECRETS_KEY || undefined;
  if (secretsKey !== undefined && secretsKey.length < 16) throw new ConfigError('SVC_SECRETS_KEY', 'at least 16 characters');
  const adminTenant = env.AGENT_ORC_ADMIN_TENANT || undefined;
  if (adminTenant !== undefined && !/^[a-z0-9][a-z0-9-]{0,62}$/.test(adminTenant)) throw new ConfigError('AGENT_ORC_ADMIN_TENANT', 'a tenant slug (lowercase letters, digits, hyphens)');
  const runners = (env.SVC_RUNNERS ?? '').split(',').map((s) => s.trim()).filter(Boolean).map((u, i) => url(`SVC_RUNNERS[${i}]`, u)!);
  const workerUrlByRuntime: Partial<Record<Runtime, string>> = {};
  for (const rt of RUNTIMES) {
    const u = url(`SVC_WORKER_URL_${rt.toUpperCase()}`, env[`SVC_WORKER_URL_${rt.toUpperCase()}`]);
    if (u) workerUrlByRuntime[rt] = u;
  }
  const providerEnv = providerEnvOf(env);
  const protocol = int('SVC_WORKER_PROTOCOL', env.SVC_WORKER_PROTOCOL, 1, 1, 1);
  const runnerUrl = url('SVC_RUNNER_URL', env.SVC_RUNNER_URL);
  const workerToken = env.SVC_WORKER_TOKEN || undefined;
  const sessionId = env.SVC_SESSION_ID || undefined;
  if (runnerUrl && workerToken && !sessionId) throw new ConfigError('SVC_SESSION_ID', 'required in outbound worker mode (SVC_RUNNER_URL and SVC_WORKER_TOKEN set)');
  const dataDir = resolve(env.SVC_DATA_DIR || './.svc');
  const secretsDir = join(dataDir, 'secrets');
  const runnerDataDir = resolve(env.SVC_RUNNER_DATA_DIR || `${dataDir}/runner`);
  if (traits.keepsAgentFiles && (isWithin(secretsDir, runnerDataDir) || isWithin(runnerDataDir, secretsDir))) {
    throw new ConfigError('SVC_RUNNER_DATA_DIR', `a folder that neither contains nor lies inside the secrets folder ${secretsDir}`);
  }
  const internalToken = env.SVC_INTERNAL_TOKEN || undefined;
  if (internalToken !== undefined && internalToken.length < 16) throw new ConfigError('SVC_INTERNAL_TOKEN', 'at least 16 characters');
  // conductor and runner in one process talk in-process; any other arrangement calls runner routes over the network
  if (appEnv !== 'dev' && traits.internalCallsCross(runners.length > 0) && !internalToken) {
    throw new ConfigError('SVC_INTERNAL_TOKEN', `required when AGENT_ORC_ENV is "${appEnv}" (not dev) and conductor and runner run in separate processes`);
  }
  const otel = otelOf(env);
  const childEnvAllow = (env.AGENT_WORKER_CHILD_ENV_ALLOW ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  const privateAddresses = privateAddressesOf(env, appEnv);

  const config: Config = {
    roles,
    host,
    port,
    env: appEnv,
    dataDir,
    secretsDir,
    databaseUrl,
    embeddedPostgres: { osUser: pgOsUser, settings: pgSettings },
    logLevel: pick('SVC_LOG_LEVEL', env.SVC_LOG_LEVEL, ['debug', 'info', 'warn', 'error', 'silent'] as const, 'info'),
    heap: {
      youngMiB: /--(max[-_]semi[-_]space[-_]size|semi[-_]space[-_]growth[-_]factor)/.test(env.NODE_OPTIONS ?? '') ? 0 : int('SVC_HEAP_YOUNG_MIB', env.SVC_HEAP_YOUNG_MIB, 16, 0, 1024),
      growingPercent: /--heap[-_]growing[-_]percent/.test(env.NODE_OPTIONS ?? '') ? 0 : int('SVC_HEAP_GROWING_PERCENT', env.SVC_HEAP_GROWING_PERCENT, 0, 0, 1000),
    },
    sandboxLimits: sandboxLimitsConfig(env, appEnv),
    bodyLimitBytes: int('SVC_BODY_LIMIT_BYTES', env.SVC_BODY_LIMIT_BYTES, 1024 * 1024, 1024, 512 * 1024 * 1024),
    uploadLimitBytes: int('SVC_UPLOAD_LIMIT_BYTES', env.SVC_UPLOAD_LIMIT_BYTES, 64 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    identity: {
      pepper,
      bootstrapToken: keyToken('SVC_BOOTSTRAP_TOKEN', env.SVC_BOOTSTRAP_TOKEN),
      adminTenant,
      keyEnv: appEnv === 'dev' ? 'test' : appEnv,
      jwtIssuer: env.SVC_JWT_ISSUER || undefined,
      jwtAudience: env.SVC_JWT_AUDIENCE || undefined,
      jwksUrl: url('SVC_JWT_JWKS_URL', env.SVC_JWT_JWKS_URL),
      runTokenSecret: env.SVC_RUN_TOKEN_SECRET || undefined,
      runTokenTtlSeconds: int('SVC_RUN_TOKEN_TTL_S', env.SVC_RUN_TOKEN_TTL_S, 900, 2, 86_400),
      secretsKey,
    },
    internalToken,
    otel,
    conductor: {
      runners,
      instanceId: env.SVC_INSTANCE_ID || undefined,
      reconcileMs: int('SVC_RECONCILE_MS', env.SVC_RECONCILE_MS, 3000, 100, 600_000),
      leaseTtlMs: int('SVC_LEASE_TTL_MS', env.SVC_LEASE_TTL_MS, 15_000, 500, 3_600_000),
      runWriteRetryMs: int('SVC_RUN_WRITE_RETRY_MS', env.SVC_RUN_WRITE_RETRY_MS, 30_000, 100, 3_600_000),
    },
    runner: {
      publicUrl: url('SVC_RUNNER_PUBLIC_URL', env.SVC_RUNNER_PUBLIC_URL),
      workerUrl: url('SVC_WORKER_URL', env.SVC_WORKER_URL),
      workerUrlByRuntime,
      stateCapBytes: int('SVC_STATE_CAP_BYTES', env.SVC_STATE_CAP_BYTES, 64 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
      dataDir: runnerDataDir,
      conductorUrl: url('SVC_CONDUCTOR_URL', env.SVC_CONDUCTOR_URL),
      adoptGraceMs: int('SVC_RUNNER_ADOPT_GRACE_MS', env.SVC_RUNNER_ADOPT_GRACE_MS, 60_000, 100, 3_600_000),
      sandbox: pick('SVC_SANDBOX', env.SVC_SANDBOX, SANDBOX_MODES, 'bwrap'),
      searchPath: env.PATH || '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      workerSubstrate: pick('SVC_WORKER_SUBSTRATE', env.SVC_WORKER_SUBSTRATE, ['process', 'container', 'hosted_a', 'hosted_b'] as const, 'process'),
      workerIdleMs: int('SVC_WORKER_IDLE_MS', env.SVC_WORKER_IDLE_MS, 300_000, 100, 86_400_000),
      workerPollMs: int('SVC_WORKER_POLL_MS', env.SVC_WORKER_POLL_MS, 25_000, 100, 300_000),
      workerStartTimeoutMs: int('SVC_WORKER_START_TIMEOUT_MS', env.SVC_WORKER_START_TIMEOUT_MS, 60_000, 100, 3_600_000),
      workerTokenSecret: env.SVC_WORKER_TOKEN_SECRET || undefined,
      providerEnv,
      privateAddresses,
      container: containerConfig(env),
    },
    worker: {
      mode: pick('MODE', env.MODE, WORKER_MODES, traits.aloneDefaults.workerMode ?? 'all'),
      stateDir: resolve(env.SVC_STATE_DIR || (traits.aloneDefaults.workerStateDir ?? `${dataDir}/state`)),
      stepCount: int('AGENT_WORKER_STEP_COUNT', env.AGENT_WORKER_STEP_COUNT, 24, 1, 1000),
      modelStallTimeoutMs: int('SVC_MODEL_STALL_TIMEOUT_MS', env.SVC_MODEL_STALL_TIMEOUT_MS, 60_000, 100, 3_600_000),
      childEnvAllow,
      hostEnv: Object.fromEntries(['PATH', ...childEnvAllow].flatMap((k) => (env[k] !== undefined ? [[k, env[k] as string]] : []))),
      allowHostTools: env.AGENT_WORKER_ALLOW_HOST_TOOLS === '1',
      runnerUrl,
      workerToken,
      sessionId,
      protocol,
      relay: relayOf(env.SVC_WORKER_RELAY),
      providerEnv,
      otel,
      privateAddresses,
    },
    agents: {
      rateLimitPerKey: int('SVC_RATE_LIMIT_PER_KEY', env.SVC_RATE_LIMIT_PER_KEY, 300, 1, 1_000_000),
      rateLimitPerOrg: int('SVC_RATE_LIMIT_PER_ORG', env.SVC_RATE_LIMIT_PER_ORG, 600, 1, 1_000_000),
      keepAliveMs: int('SVC_SSE_KEEPALIVE_MS', env.SVC_SSE_KEEPALIVE_MS, 15_000, 50, 270_000),
      turnDeadlineMs: int('SVC_AGENT_TURN_DEADLINE_MS', env.SVC_AGENT_TURN_DEADLINE_MS, 3_600_000, 1000, 24 * 3_600_000),
      aggregators: aggregatorsOf(env),
    },
    cli: {
      deviceCodeTtlMs: int('SVC_DEVICE_CODE_TTL_MS', env.SVC_DEVICE_CODE_TTL_MS, 15 * 60_000, 100, 24 * 3_600_000),
      monthCapCents: int('SVC_SPEND_CAP_MONTHLY_CENTS', env.SVC_SPEND_CAP_MONTHLY_CENTS, 10_000, 0, 1_000_000_000),
      dayCapCents: int('SVC_SPEND_CAP_DAILY_CENTS', env.SVC_SPEND_CAP_DAILY_CENTS, 2_500, 0, 1_000_000_000),
      connectedApps: Object.keys(env)
        .map((k) => /^SVC_CONNECTED_APP_([A-Z0-9]+)_CLIENT_ID$/.exec(k)?.[1])
        .filter((name): name is string => !!name && !!env[`SVC_CONNECTED_APP_${name}_CLIENT_ID`] && !!env[`SVC_CONNECTED_APP_${name}_CLIENT_SECRET`])
        .map((name) => name.toLowerCase())
        .sort(),
    },
    // billing runs beside the database (the conductor's role): only there do Stripe keys matter
    billing: billingConfig(env, appEnv, traits.needsDatabase),
    chatPublicUrl: url('SVC_CHAT_PUBLIC_URL', env.SVC_CHAT_PUBLIC_URL),
    notifications: notificationsConfig(env),
    memory: memoryConfig(env),
    approvalTimeoutSeconds: int('SVC_APPROVAL_TIMEOUT_S', env.SVC_APPROVAL_TIMEOUT_S, 86_400, 1, 30 * 86_400),
    privateAddresses,
  };
  return deepFreeze(config);
}

/** True when `inner` is `outer` or lies below it. */
function isWithin(inner: string, outer: string): boolean {
  const rel = relative(outer, inner);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
