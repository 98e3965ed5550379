import type { Hono } from 'hono';
import type { Config, RoleName } from '../config/config.ts';
import type { Database } from '../db/index.ts';
import type { WorkerMode } from '../contracts/worker.ts';
import type { WorkerClient } from '../contracts/worker.client.ts';
import type { RunnerClient } from '../contracts/runner.client.ts';
import type { Metrics } from '../shared/metrics.ts';
import type { ReadyReport } from '../shared/readiness.ts';
import type { RunHooks } from '../modules/conductor/index.ts';

/**
 * The roles table: what each role mounts, what it needs, and how its module is built. Nothing else in the program
 * branches on a role name: `buildApp` loops over this table, and `loadConfig` reads the requirements below. Only type
 * imports at the top, so the config loader can read the table without loading a module; each `build` imports its
 * module lazily (a worker-only process never loads the conductor).
 */
export interface RoleSpec {
  description: string;
  mounts: readonly string[];
  /** Opens PostgreSQL (opened while the modules load, migrated before this role's module is built). */
  needsDatabase: boolean;
  /**
   * SQL its module installs at start besides sql/ (the conductor's job queue): baked with the migrations into the
   * template a new embedded cluster is copied from. Asked for only when a cluster is created.
   */
  schemaSql?(): Promise<string>;
  /** Config variables this role cannot start without when AGENT_ORC_ENV is not dev (exit 2 naming the first missing). */
  requiredOutsideDev: readonly string[];
  /** Keeps agents' files under SVC_RUNNER_DATA_DIR, which must neither contain nor lie inside the secrets folder. */
  keepsAgentFiles: boolean;
  /** Its side of the internal calls guarded by SVC_INTERNAL_TOKEN: it serves them (runner) or makes them (conductor). */
  internalCalls?: 'serves' | 'calls';
  /** Answers `/healthz` (a worker alone answers only its own `/health`). */
  healthz: boolean;
  /** Beside this role the module is reached in-process only; its `publicBeside` routes (if any) stay on the public port. */
  inProcessBeside?: RoleName;
  /** Defaults that hold when this role is the only one in its process (a worker container). */
  aloneDefaults?: { workerMode?: WorkerMode; workerStateDir?: string };
  /**
   * The port it listens on when neither PORT nor --port says (seed 000: the conductor 8080, a runner and a worker
   * 7070). A process of several roles takes the port of its first role in the order conductor, runner, worker, so
   * the all-in-one server keeps 8080.
   */
  defaultPort: number;
  /**
   * A mode without a port, taken when this role is the only one in its process and `applies(config)`: `svc serve`
   * starts it instead of the HTTP server (a sandbox worker in outbound client mode).
   */
  portless?: PortlessMode;
  build(ctx: RoleContext): Promise<BuiltModule>;
}

/** A role's mode without a port: what it is (for messages), when it applies, and how it starts. */
export interface PortlessMode {
  what: string;
  applies(config: Config): boolean;
  start(config: Config): Promise<PortlessProcess>;
}

export interface PortlessProcess {
  /** Settles when it has stopped on its own (a shutdown command) or after `stop()`. */
  done: Promise<void>;
  stop(): Promise<void>;
}

/** What `buildApp` hands each role's build. */
export interface RoleContext {
  config: Config;
  selfUrl: string;
  version: string;
  metrics: Metrics;
  /** The root application (complete by the time requests flow: in-process calls back into this process). */
  root: Hono;
  /** SVC_INTERNAL_TOKEN or the generated one; undefined when no role of this process serves or makes internal calls. */
  internalToken: string | undefined;
  /** Open and migrated (roles with `needsDatabase` only). */
  database: Database | undefined;
  has(role: RoleName): boolean;
  /** In-process fetch of a module built earlier in this process (its routes, Request and Response in between). */
  fetchOf(role: RoleName): typeof fetch | undefined;
  /** The direct transport of a module built earlier in this process: its contract's client as function calls. */
  directOf<R extends keyof DirectClients>(role: R): ((baseUrl: string) => DirectClients[R]) | undefined;
}

/** What each module's direct transport implements: the contract interface its HTTP client implements too. */
export interface DirectClients {
  worker: WorkerClient;
  runner: RunnerClient;
}

/** A built module: its whole surface, and how it stops. */
export interface BuiltModule {
  /** Mounted at `/` on the public port, unless reached in-process (`inProcessBeside`); always reachable by `fetchOf`. */
  app: Hono<any>;
  /**
   * The module's contract called directly by the roles beside it in this process (typed function calls and async
   * iterables of RunEvents, no Request, Response or JSON in between); `baseUrl` is the address its client reports.
   */
  direct?(baseUrl: string): DirectClients[keyof DirectClients];
  /** Routes served on the public port even when the module is reached in-process. */
  publicBeside?: Hono<any>;
  /** Extra apps mounted at their prefix on the public port (the conductor's agents API: `/v1`, `/api`). */
  mounts?: ReadonlyArray<{ prefix: string; app: Hono<any> }>;
  /** Called once the process serves every module on its port (a runner announces itself to its conductor then). */
  serving?(): void;
  /** First phase of a graceful stop, before any module drains: end work in flight (runs) so open responses finish. */
  stopWork?(): Promise<void>;
  /** Second phase, in build order: let the module's streams end. */
  drain?(): Promise<void>;
  close(): Promise<void>;
  /** For `/readyz`: what this module needs answers (the database, a runner of the fleet, …). */
  readiness?(): Promise<ReadyReport>;
  /** Settles only if background work the module began once serving failed for good (the server then stops). */
  failure?: Promise<Error>;
  /** The conductor's run hooks, for code embedding svc (BuiltApp.runHooks). */
  runHooks?: RunHooks;
  /** The owner key confirmed or minted at boot. */
  bootstrapKey?: string;
  /**
   * Start-up checks still running (the runner's sandbox probe): the modules built after this one are built meanwhile,
   * and the process serves only once they settled (a failure fails the start).
   */
  ready?: Promise<void>;
}

export const ROLES: Readonly<Record<RoleName, RoleSpec>> = {
  worker: {
    description: 'LLM inference for general, runtime_a, runtime_b',
    mounts: ['/health', '/run', '/state/*'],
    needsDatabase: false,
    requiredOutsideDev: [],
    keepsAgentFiles: false,
    healthz: false,
    defaultPort: 7070,
    inProcessBeside: 'runner',
    aloneDefaults: { workerMode: 'general', workerStateDir: '/var/svc/state' },
    // SVC_RUNNER_URL and SVC_WORKER_TOKEN: one session driven by a runner's callback protocol (modules/worker/outbound.ts);
    // the sandbox substrates start workers this way.
    portless: {
      what: 'the outbound worker',
      applies: (config) => Boolean(config.worker.runnerUrl && config.worker.workerToken),
      async start(config) {
        const { startOutboundWorker } = await import('../modules/worker/index.ts');
        return startOutboundWorker({ config: config.worker });
      },
    },
    async build(ctx) {
      const { createWorker } = await import('../modules/worker/index.ts');
      const worker = createWorker({ config: ctx.config.worker });
      return { app: worker.app, direct: (baseUrl) => worker.direct(baseUrl), drain: () => worker.close(), close: () => worker.close() };
    },
  },
  runner: {
    description: 'live sessions, toolkit, MCP, VFS, worker leases',
    mounts: ['/runner/*', '/worker/sessions/*'],
    needsDatabase: false,
    requiredOutsideDev: [],
    keepsAgentFiles: true,
    internalCalls: 'serves',
    healthz: true,
    defaultPort: 7070,
    // Beside a conductor, only the session MCP endpoint (session token) stays public: worker processes reach it over HTTP.
    inProcessBeside: 'conductor',
    async build(ctx) {
      const { createRunner } = await import('../modules/runner/index.ts');
      const { config } = ctx;
      const { randomBytes } = await import('node:crypto');
      // worker tokens die with the workers they were minted for: in dev a key per process does; elsewhere it is configured
      const workerTokenSecret = config.runner.workerTokenSecret ?? (config.env === 'dev' ? randomBytes(32).toString('base64url') : undefined);
      const runner = createRunner({
        config: { ...config.runner, workerTokenSecret },
        sandboxLimits: config.sandboxLimits,
        internalToken: ctx.internalToken!,
        publicUrl: config.runner.publicUrl ?? ctx.selfUrl,
        version: ctx.version,
        metrics: ctx.metrics,
        workerFetch: ctx.fetchOf('worker'),
        workerDirect: ctx.directOf('worker'),
        // Beside a conductor, the toolkit's delegate and notify call it in-process (the app is complete by then).
        conductor: ctx.has('conductor') && !config.runner.conductorUrl ? { baseUrl: ctx.selfUrl, fetch: (req) => ctx.root.fetch(req) } : undefined,
      });
      const built: BuiltModule = {
        app: runner.app,
        direct: (baseUrl) => runner.direct(baseUrl),
        publicBeside: runner.mcpApp,
        // Split from its conductor, a runner tells it that it (re)started, so new runs are accepted at once.
        serving: () => (config.runner.conductorUrl && !ctx.has('conductor') ? runner.announce(config.runner.conductorUrl) : undefined),
        drain: () => runner.close(),
        close: () => runner.close(),
        readiness: () => runner.readiness(),
        ready: runner.ready,
      };
      return built;
    },
  },
  conductor: {
    description: 'control plane: tenants, keys, profiles, runs, events, its features (billing, publishing, automations, workflows, kits, …); the /v1 agents API',
    mounts: ['/api/*', '/v1/*', '/chat/*', '/dashboard/*'],
    needsDatabase: true,
    schemaSql: async () => (await import('../modules/conductor/index.ts')).jobsSchemaSql(),
    requiredOutsideDev: ['AGENT_API_KEY_PEPPER', 'SVC_SECRETS_KEY'],
    keepsAgentFiles: false,
    internalCalls: 'calls',
    healthz: true,
    defaultPort: 8080,
    async build(ctx) {
      const { createConductor } = await import('../modules/conductor/index.ts');
      const { createAgentsApi } = await import('../modules/agents-api/index.ts');
      const { MODEL_PROVIDERS, keyIsSet } = await import('../contracts/model-providers.ts');
      const { config } = ctx;
      const database = ctx.database!;
      const conductor = await createConductor({ config, database, runnerDirect: ctx.directOf('runner'), internalToken: ctx.internalToken!, selfUrl: ctx.selfUrl, metrics: ctx.metrics });
      let api: Awaited<ReturnType<typeof createAgentsApi>>;
      try {
        api = await createAgentsApi({
          db: database.db,
          conductor: conductor.services,
          limiter: conductor.services.limiter,
          signals: database,
          databaseLost: database.lost,
          limits: { perKey: config.agents.rateLimitPerKey, perOrg: config.agents.rateLimitPerOrg, windowMs: 60_000 },
          settings: {
            ...config.agents,
            selfUrl: config.runner.conductorUrl ?? ctx.selfUrl,
            version: ctx.version,
            serverKeys: MODEL_PROVIDERS.filter((p) => keyIsSet(p, config.worker.providerEnv)).map((p) => p.id),
            privateAddresses: config.privateAddresses,
          },
        });
      } catch (err) {
        await conductor.close().catch(() => {});
        throw err;
      }
      return {
        app: conductor.app,
        mounts: [
          { prefix: '/v1', app: api.v1 },
          { prefix: '/api', app: api.api },
        ],
        stopWork: () => conductor.drain(),
        drain: () => api.drain(),
        async close() {
          await api.close();
          await conductor.close();
        },
        readiness: () => conductor.readiness(),
        serving() {
          conductor.serving();
          api.serving();
        },
        failure: conductor.failure,
        runHooks: conductor.hooks,
        bootstrapKey: conductor.bootstrapKey,
      };
    },
  },
};

/** Build order: a role comes after the roles it reaches in-process (worker → runner → conductor). */
export const BUILD_ORDER: readonly RoleName[] = ['worker', 'runner', 'conductor'];

/** The union of the roles' requirements, as `loadConfig` and `buildApp` read them. */
export function roleTraits(roles: readonly RoleName[]) {
  const specs = roles.map((r) => ROLES[r]);
  const serves = specs.some((s) => s.internalCalls === 'serves');
  const calls = specs.some((s) => s.internalCalls === 'calls');
  return {
    needsDatabase: specs.some((s) => s.needsDatabase),
    requiredOutsideDev: [...new Set(specs.flatMap((s) => s.requiredOutsideDev))],
    keepsAgentFiles: specs.some((s) => s.keepsAgentFiles),
    healthz: specs.some((s) => s.healthz),
    /** Some module of this process serves or makes internal calls. */
    internalCalls: serves || calls,
    /**
     * Internal calls cross processes: one side lives elsewhere, or a calling role has network peers (SVC_RUNNERS).
     * Serving and calling in one process with no peers talk in-process.
     */
    internalCallsCross: (hasPeers: boolean) => serves !== calls || (calls && hasPeers),
    aloneDefaults: specs.length === 1 ? (specs[0].aloneDefaults ?? {}) : {},
    /** Roles arrive in the order conductor, runner, worker (parseRoles): the first one's port. */
    defaultPort: specs[0]?.defaultPort ?? ROLES.conductor.defaultPort,
  };
}

export function needsDatabase(roles: readonly RoleName[]): boolean {
  return roleTraits(roles).needsDatabase;
}
