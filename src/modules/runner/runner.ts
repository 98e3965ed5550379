import { Hono } from 'hono';
import type { Config } from '../../config/config.ts';
import type { FetchLike } from '../../contracts/http-client.ts';
import type { PoolSpec, ProfileSpec, RunnerInfo } from '../../contracts/runner.wire.ts';
import { useJsonErrors } from '../../shared/http.ts';
import { runnerHash } from '../../shared/ids.ts';
import { createRegistry } from './registry/registry.store.ts';
import { registryRoutes } from './registry/registry.routes.ts';
import { createRunnerMetrics } from './runner.metrics.ts';
import { runnerReadiness } from './runner.readiness.ts';
import type { ReadyReport } from '../../shared/readiness.ts';
import { requireInternalToken, resolveTenant, type RunnerEnv } from './runner.context.ts';
import { runRoutes } from './runs/runs.routes.ts';
import { createTaps } from './runs/taps.ts';
import { announce } from './announce.ts';

/** Events of an adoptable run the runner keeps for a conductor that re-attaches (runs/taps.ts). */
const ADOPTABLE_EVENTS_KEPT = 10_000;
import { sessionRoutes } from './sessions/sessions.routes.ts';
import { createSessionStore } from './sessions/sessions.store.ts';
import { stateRoutes } from './sessions/state.routes.ts';
import { createWorkerSlots, IN_PROCESS_WORKER_URL } from './workers/worker-slots.ts';
import { createDirectRunnerClient } from './runner.direct.ts';
import { createRunnerClient, type RunnerClient } from '../../contracts/runner.client.ts';
import type { WorkerClient } from '../../contracts/worker.client.ts';
import type { SessionRecord } from './sessions/sessions.store.ts';
import { workerRoutes } from './workers/workers.routes.ts';
import { createRunCallbacksClient } from '../../contracts/run-callbacks.client.ts';
import { createMemoryClient } from '../../contracts/memory.client.ts';
import { mcpRoutes } from './mcp/mcp.routes.ts';
import { createStdioMcpHost } from './mcp/stdio-mcp.ts';
import { createRemoteMcpHost } from './mcp/remote-mcp.ts';
import { createToolkit } from './toolkit/toolkit.service.ts';
import { toolkitRoutes } from './toolkit/toolkit.routes.ts';
import { approvalRoutes, createApprovals } from './approvals/index.ts';
import { createVfsManager, vfsRoutes } from './vfs/index.ts';
import { leaseRoutes } from './workers/leases.routes.ts';
import { createSessionTokens } from './mcp/session-token.ts';
import { sessionMcpUrl } from './runs/runs.service.ts';
import { createSandbox } from './sandbox/index.ts';
import { createCommandRunner, type CommandRunner } from './substrates/process/commands.ts';
import { createProcessSubstrate } from './substrates/process/worker-process.ts';
import { createContainerSubstrate } from './substrates/container/container-substrate.ts';
import type { WorkerSubstrate } from './substrates/substrate.ts';
import { createSandboxWorkers, type UploadLimits } from './workers/sandbox/sandbox-workers.ts';
import { callbackRoutes } from './workers/sandbox/callbacks.routes.ts';
import { createWorkerTokens } from './workers/sandbox/worker-token.ts';
import { createLogger } from '../../shared/log.ts';
import { createMetrics, type Metrics } from '../../shared/metrics.ts';
import { createLimiter } from './limits/index.ts';
import type { LimitsConfig } from '../../contracts/sandbox-limits.ts';

const log = createLogger('runner');

export interface RunnerDeps {
  config: Config['runner'];
  /** What every `/runner/*` call but the session MCP endpoint must carry (SVC_INTERNAL_TOKEN, or generated). */
  internalToken: string;
  /** The URL conductors use to reach this runner; its hash is embedded in every session id this runner mints. */
  publicUrl: string;
  version: string;
  /** How worker calls travel: the global fetch (default) or the worker app in-process (`(req) => worker.app.fetch(req)`). */
  workerFetch?: FetchLike;
  /**
   * The worker module of this process, called directly (the worker contract's direct transport, worker.direct.ts):
   * serves the runtimes with no worker URL configured. Takes precedence over `workerFetch` for them.
   */
  workerDirect?: (baseUrl: string) => WorkerClient;
  /** The process's metrics registry, which its `/metrics` serves (default: one of the runner's own, for unit tests). */
  metrics?: Metrics;
  /** Period of the background sidecar probe; 0 turns it off. Default 5 s. */
  probeIntervalMs?: number;
  /**
   * How the tools that call back into the conductor (delegate, notify) reach it: in role all the conductor's app
   * in-process; otherwise `config.conductorUrl` (SVC_CONDUCTOR_URL) over the network. Neither: those tools fail politely.
   */
  conductor?: { fetch?: FetchLike; baseUrl: string };
  /**
   * Further worker substrates beside `process` (or replacing it, by id): how an embedding program plugs in a
   * `container` substrate, and how protocol tests stand in for a worker themselves.
   */
  substrates?: WorkerSubstrate[];
  /** Event upload limits of sandbox workers (default: the seed's 4 MiB line, 256 MiB upload, 4 hours). */
  uploadLimits?: Partial<UploadLimits>;
  /**
   * What an agent's commands, stdio MCP servers and sandbox workers may consume (config.sandboxLimits:
   * SVC_SANDBOX_LIMITS, SVC_SANDBOX_<NAME>[_MAX]). Absent: `off` (unit tests' runners enforce nothing).
   */
  sandboxLimits?: LimitsConfig;
}

export interface Runner {
  /** `/runner/*` (internal-token protected, tenant from TENANT_HEADER), `/healthz` and `/metrics`. */
  app: Hono;
  /**
   * What a runner beside a conductor serves on the public port: only the session MCP endpoint (session token), which
   * worker processes (Claude Code, Codex, custom sidecars) reach over HTTP. Everything else stays in-process.
   */
  mcpApp: Hono;
  /** Settles when the start-up checks are done (the sandbox probe). */
  ready: Promise<void>;
  /** For `/readyz`: start-up done, and a configured worker answers. */
  readiness(): Promise<ReadyReport>;
  info(): RunnerInfo;
  /**
   * The runner contract's direct transport (runner.direct.ts), for a conductor in this process: the run path as
   * function calls, the rest through `app` in-process. `baseUrl` is what the client reports as its address.
   */
  direct(baseUrl: string): RunnerClient;
  /** A session MCP URL with a fresh session token, as a run of that session receives it. */
  sessionMcpUrl(sessionId: string): string;
  /** Tells a separate conductor that this runner (re)started (announce.ts); in the background, retried. */
  announce(conductorUrl: string): void;
  /** Stops probing and ends every run in flight with a terminal `error`. */
  close(): Promise<void>;
}

const CAPABILITIES = ['profiles', 'pools', 'sessions', 'runs', 'state', 'hydrate', 'topology', 'toolkit', 'mcp', 'vfs', 'skills', 'sandbox-workers'];

/**
 * The runner role: owns live sessions, executes runs through the configured sidecar workers and reports their health.
 * Sessions, profiles and pools live in memory; the conductor keeps the durable copies (and hydrates them back here).
 * Called by the app's composition root; conductors talk to it through `src/contracts/runner.client.ts`.
 */
export function createRunner(deps: RunnerDeps): Runner {
  const publicUrl = deps.publicUrl.replace(/\/+$/, '');
  const hash = runnerHash(publicUrl);
  const startedAt = new Date().toISOString();
  const closing = new AbortController();
  const registry = deps.metrics ?? createMetrics();
  const limiter = createLimiter({ config: deps.sandboxLimits, dataDir: deps.config.dataDir, searchPath: deps.config.searchPath, runnerHash: hash, metrics: registry });
  const vfs = createVfsManager({
    dataDir: deps.config.dataDir,
    // a session's /work on a disk of its own, diskMiB in size, where this host can make one
    disks: {
      root: () => limiter.diskRoot(),
      prepare: (session) => limiter.sessionDisk(session.id, limiter.limitsOf(session.profile)),
      mountOf: (id) => limiter.diskOf(id),
      release: (id) => limiter.releaseSession(id),
    },
  });
  const sandbox = createSandbox({ mode: deps.config.sandbox, searchPath: deps.config.searchPath });
  const tokens = createSessionTokens();
  const workerTokens = createWorkerTokens(deps.config.workerTokenSecret);
  const profiles = createRegistry<ProfileSpec>();
  const pools = createRegistry<PoolSpec>();
  const substrates = new Map<string, WorkerSubstrate>([['process', createProcessSubstrate(sandbox, limiter)]]);
  if (deps.config.container) {
    const container = createContainerSubstrate({ config: deps.config.container, runnerId: `runner-${hash}`, adoptGraceMs: deps.config.adoptGraceMs });
    substrates.set(container.id, container);
  }
  for (const s of deps.substrates ?? []) substrates.set(s.id, s);
  let mcpApp: Hono<RunnerEnv> | undefined;
  const sandboxWorkers = createSandboxWorkers({
    substrates,
    defaultSubstrate: deps.config.workerSubstrate ?? 'process',
    tokens: workerTokens,
    dataDir: deps.config.dataDir,
    providerEnv: deps.config.providerEnv ?? {},
    privateAddresses: deps.config.privateAddresses,
    // what a sandbox worker sends its callback socket reaches the same routes as the public port's
    callbacks: (req) => (mcpApp ? mcpApp.fetch(req) : Response.json({ error: 'runner starting' }, { status: 503 })),
    vfs,
    pools,
    idleMs: deps.config.workerIdleMs ?? 300_000,
    pollMs: deps.config.workerPollMs ?? 25_000,
    startTimeoutMs: deps.config.workerStartTimeoutMs,
    stateCapBytes: deps.config.stateCapBytes,
    limits: deps.uploadLimits,
    sandboxLimits: deps.sandboxLimits,
    onLimit: (limit) => limiter.tripped(limit),
  });
  // every live session holds a VFS lease; its scratch directory goes with it, and a sandbox session's worker too
  const sessions = createSessionStore(undefined, {
    onCreate: (rec) => vfs.allocate(rec),
    onShutdown: (rec) => {
      vfs.release(rec.id);
      void limiter.releaseSession(rec.id);
      sandboxWorkers.release(rec.id).catch((err) => log.warn('stopping a sandbox worker failed', { sessionId: rec.id, error: String(err) }));
    },
  });
  const conductorTarget = deps.conductor ?? (deps.config.conductorUrl ? { baseUrl: deps.config.conductorUrl } : undefined);
  const conductor = conductorTarget ? createRunCallbacksClient(conductorTarget) : undefined;
  const memory = conductorTarget ? createMemoryClient(conductorTarget) : undefined;
  const processCommands = createCommandRunner(sandbox, limiter);
  // a container session's commands run in its container; every other session's in the runner's command sandbox
  const commands: CommandRunner = {
    run(spec, session) {
      const rec = session.sessionId ? sessions.findLive(session.sessionId) : undefined;
      const inWorker = rec ? sandboxWorkers.commandsOf(rec) : undefined;
      const ran = inWorker ? inWorker(spec) : processCommands.run(spec, session);
      return ran.then((result) => {
        if (result.limit) limiter.tripped(result.limit);
        return result;
      });
    },
  };
  const approvals = createApprovals({ conductor, sessions });
  const toolkit = createToolkit({ vfs, pools, conductor, memory, commands, limitsOf: (rec) => limiter.limitsOf(rec.profile), approvals });
  const metrics = createRunnerMetrics(registry, function* () {
    for (const s of sessions.all()) yield s.status;
  });
  const slots = createWorkerSlots(deps.config, deps.workerFetch, { probeIntervalMs: deps.probeIntervalMs, local: deps.workerDirect?.(IN_PROCESS_WORKER_URL) });
  const core = { sessions, profiles, slots, metrics, hash, sandboxWorkers };

  const info = (): RunnerInfo => ({
    id: `runner-${hash}`,
    hash,
    version: deps.version,
    startedAt,
    capabilities: [...CAPABILITIES],
    toolkitNames: toolkit.names(),
    // known and empty means "this runner launches no workers" (no bubblewrap, and the operator did not opt out)
    substrates: sandboxWorkers.offered(),
    defaultSubstrate: sandboxWorkers.defaultSubstrate,
    substratesKnown: true,
    mcpBaseUrl: `${publicUrl}/runner/sessions`,
    sandbox: sandbox.status(),
    limits: limiter.report(),
  });
  let started = false;
  const ready = Promise.all([sandbox.ready(), sandboxWorkers.ready(), limiter.ready()]).then(([status]) => {
    started = true;
    if (status.mode === 'off') log.warn('command sandbox off (SVC_SANDBOX=off): agents run commands unsandboxed as this user', {});
    else if (status.available) log.debug('command sandbox ready', { detail: status.detail });
    else log.warn('command sandbox unavailable: profiles that run commands (@exec) are refused', { detail: status.detail });
  });

  const app = new Hono<RunnerEnv>();
  useJsonErrors(app);
  app.get('/healthz', (c) => c.text('ok'));
  // Alone, the process's own /metrics (the same registry) answers first; this one serves the runner's unit tests.
  app.get('/metrics', async (c) => c.body(await registry.render(), 200, { 'content-type': registry.contentType }));
  app.use('/runner/*', requireInternalToken(deps.internalToken), resolveTenant);
  app.get('/runner/info', async (c) => {
    await ready;
    return c.json(info());
  });
  app.route('/', registryRoutes({ profiles, pools }));
  app.route('/', workerRoutes({ slots, sessions }));
  app.route('/', leaseRoutes({ workers: sandboxWorkers }));
  app.route('/', sessionRoutes(core));
  const stateDeps = { ...core, stateCapBytes: deps.config.stateCapBytes };
  app.route('/', stateRoutes(stateDeps));
  const taps = createTaps({ graceMs: deps.config.adoptGraceMs, maxEvents: ADOPTABLE_EVENTS_KEPT, log: log.child('taps') });
  const stdio = createStdioMcpHost({ sandbox, limiter, view: (rec) => vfs.view(rec, pools.list(rec.tenant)), version: deps.version });
  const remote = createRemoteMcpHost({ privateAddresses: deps.config.privateAddresses, version: deps.version });
  const runsDeps = { ...core, publicUrl, tokens, closing: closing.signal, taps, skillView: (rec: SessionRecord) => vfs.view(rec, pools.list(rec.tenant)), stdio, remote, toolkit, conductor };
  app.route('/', runRoutes(runsDeps));
  app.route('/', toolkitRoutes({ toolkit, sessions }));
  app.route('/', approvalRoutes({ approvals }));
  app.route('/', vfsRoutes({ vfs, sessions }));
  const mcp = mcpRoutes({ sessions, toolkit, tokens, workerTokens, version: deps.version, closing: closing.signal, stdio, remote, approvals });
  const callbacks = callbackRoutes({ workers: sandboxWorkers, tokens: workerTokens, stateCapBytes: deps.config.stateCapBytes });
  app.route('/', mcp);
  app.route('/', callbacks);
  mcpApp = new Hono<RunnerEnv>();
  useJsonErrors(mcpApp);
  mcpApp.route('/', mcp);
  mcpApp.route('/', callbacks);

  return {
    app: app as unknown as Hono,
    mcpApp: mcpApp as unknown as Hono,
    ready,
    readiness: runnerReadiness({ started: () => started, slots, substrates: [...substrates.values()], limits: () => limiter.readiness() }),
    info,
    direct: (baseUrl) =>
      createDirectRunnerClient({ ...runsDeps, ...stateDeps }, createRunnerClient({ baseUrl, fetch: (req) => app.fetch(req), internalToken: deps.internalToken })),
    sessionMcpUrl: (sessionId) => sessionMcpUrl(publicUrl, sessionId, tokens),
    announce(conductorUrl) {
      void announce({ conductorUrl, publicUrl, internalToken: deps.internalToken, log, signal: closing.signal });
    },
    async close() {
      slots.close();
      closing.abort(new Error('runner shutting down'));
      await sandboxWorkers.close();
      await Promise.all([...substrates.values()].map((s) => s.close?.()));
      await limiter.close();
    },
  };
}
