import type { LimitExceeded, LimitsConfig } from '../../../../contracts/sandbox-limits.ts';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isTerminal, runEvent, type RunEvent } from '../../../../contracts/run-event.ts';
import { EVENT_LINE_LIMIT_BYTES, EVENT_UPLOAD_LIMIT_BYTES, EVENT_UPLOAD_MAX_MS, type WorkerCommand, type WorkerLease } from '../../../../contracts/sandbox-worker.ts';
import type { PoolSpec } from '../../../../contracts/runner.wire.ts';
import type { StateBundle } from '../../../../contracts/worker.client.ts';
import type { WorkerRunRequest } from '../../../../contracts/worker.ts';
import { describeError } from '../../../../shared/errors.ts';
import { randomId } from '../../../../shared/ids.ts';
import { createLogger } from '../../../../shared/log.ts';
import type { Registry } from '../../registry/registry.store.ts';
import type { SessionRecord } from '../../sessions/sessions.store.ts';
import type { WorkerSubstrate } from '../../substrates/substrate.ts';
import type { CommandResult, CommandSpec } from '../../substrates/process/commands.ts';
import { dirName } from '../../vfs/vfs.manager.ts';
import type { VfsManager } from '../../vfs/index.ts';
import { SESSION_TOKEN_PARAM } from '../../mcp/session-token.ts';
import { createChannel } from './channel.ts';
import { createCommandQueue } from './command-queue.ts';
import { readEventUpload, UploadError, type UploadLimits } from './event-upload.ts';
import { toLease, writeStateToDisk, type ActiveRun, type Entry } from './worker-entry.ts';
import { launchWorker } from './worker-launch.ts';
import { listenWorkerSocket, providerOf } from './worker-socket.ts';
import { mcpTokenTtlMs, type WorkerTokens } from './worker-token.ts';

/**
 * Sandbox workers (profile `workerMode: "sandbox"`): one worker per session, launched on a substrate, driven over
 * the callback protocol v1. A run becomes a `run` command the worker long-polls for; its events come back as an NDJSON
 * upload and feed the run's stream. After `idleMs` without a run the worker is paused (asked to export its state and
 * shut down); the next run resumes it on the same session folder, so the conversation goes on.
 */
export interface SandboxWorkersDeps {
  substrates: ReadonlyMap<string, WorkerSubstrate>;
  defaultSubstrate: string;
  tokens: WorkerTokens;
  /** The runner's data folder: session folders live under `<dataDir>/sandboxes/`. */
  dataDir: string;
  /** The model provider variables of this runner (OPENAI_API_KEY, OPENAI_COMPATIBLE_BASE_URL, …). */
  providerEnv: Readonly<Record<string, string>>;
  /** SVC_PRIVATE_ADDRESSES of this runner: its sandbox workers connect tenants' MCP servers under the same policy (absent: allow). */
  privateAddresses?: 'allow' | 'deny';
  /** Serves the callback routes and the session MCP endpoint (what arrives on a session's callback socket). */
  callbacks: (req: Request) => Response | Promise<Response>;
  vfs: VfsManager;
  pools: Registry<PoolSpec>;
  idleMs: number;
  pollMs: number;
  /** A launched worker that has not polled within this long is stopped, and the run waiting for it fails (default 60 s). */
  startTimeoutMs?: number;
  stateCapBytes: number;
  limits?: Partial<UploadLimits>;
  /** The operator's sandbox limits (SVC_SANDBOX_*): a worker gets its session profile's limits held to these. */
  sandboxLimits?: Pick<LimitsConfig, 'defaults' | 'ceilings'>;
  /** A worker ended by a sandbox limit (counted in svc_sandbox_limit_kills_total). */
  onLimit?: (limit: LimitExceeded) => void;
}

const PAUSE_GRACE_MS = 10_000;
/** How long a run whose worker dropped its upload waits for the worker's exit (and the limit that caused it). */
const EXIT_GRACE_MS = 2_000;
const log = createLogger('runner:sandbox-workers');

export interface SandboxWorkers {
  /** Sorted ids of the substrates this runner can launch workers on now. */
  offered(): string[];
  readonly defaultSubstrate: string;
  ready(): Promise<void>;
  /**
   * Runs one subtask on the session's worker (launching or resuming it first). The events end with exactly one
   * terminal; refusals (no substrate, no signing key) are that terminal.
   */
  run(rec: SessionRecord, runId: string, body: (sessionMcpUrl: string) => WorkerRunRequest, signal: AbortSignal): AsyncIterable<RunEvent>;
  lease(sessionId: string, tenant: string | undefined): WorkerLease | undefined;
  leases(tenant: string | undefined): WorkerLease[];
  invalidate(provider: string, sandboxId: string): Promise<number>;
  /** The latest state bundle the worker uploaded (or the runner hydrated). */
  state(sessionId: string): StateBundle | undefined;
  /** Puts a bundle where the session's next worker starts from; a live idle worker is stopped first (it holds the old state). */
  hydrate(session: { id: string; runtime: string }, bundle: StateBundle): Promise<void>;
  release(sessionId: string): Promise<void>;
  /**
   * Where a sandbox session's `run_command` runs when its substrate runs commands inside its worker (a container
   * session: in its container); undefined when the runner's own command sandbox runs them.
   */
  commandsOf(rec: SessionRecord): ((spec: CommandSpec) => Promise<CommandResult>) | undefined;
  close(): Promise<void>;
  /** Callback handlers (routes in callbacks.routes.ts); the token has been checked. */
  tenantOf(sessionId: string): string | undefined;
  nextCommand(sessionId: string, signal: AbortSignal): Promise<WorkerCommand | undefined>;
  receiveEvents(sessionId: string, runId: string, body: ReadableStream<Uint8Array> | null): Promise<void>;
  storeState(sessionId: string, bundle: StateBundle): void;
}

export { UploadError, type UploadLimits };

export function createSandboxWorkers(deps: SandboxWorkersDeps): SandboxWorkers {
  const limits: UploadLimits = { lineBytes: EVENT_LINE_LIMIT_BYTES, totalBytes: EVENT_UPLOAD_LIMIT_BYTES, maxMs: EVENT_UPLOAD_MAX_MS, ...deps.limits };
  const entries = new Map<string, Entry>();
  const launchDeps = { ...deps, startTimeoutMs: deps.startTimeoutMs ?? 60_000 };
  // unix socket paths are short (108 bytes): they live in a folder of their own, not under the data folder
  let socketRoot: string | undefined;
  const socketDirOf = (sessionId: string) => {
    socketRoot ??= mkdtempSync(join(tmpdir(), 'svc-w-'));
    return join(socketRoot, createHash('sha256').update(sessionId).digest('hex').slice(0, 16));
  };

  const offered = () => [...deps.substrates.values()].filter((s) => s.status().offered).map((s) => s.id).sort();

  function substrateFor(rec: SessionRecord): WorkerSubstrate {
    const requested = rec.profile.workerSubstrate ?? deps.defaultSubstrate;
    const substrate = deps.substrates.get(requested);
    if (!substrate || !substrate.status().offered) {
      const why = substrate ? `: ${substrate.status().detail}` : '';
      throw new Error(`substrate ${requested} is not offered by this runner${why} (offered: ${offered().join(', ') || 'none'})`);
    }
    return substrate;
  }

  async function ensureEntry(rec: SessionRecord, substrate: WorkerSubstrate): Promise<Entry> {
    let entry = entries.get(rec.id);
    if (entry) return entry;
    const dir = join(deps.dataDir, 'sandboxes', dirName(rec.id));
    for (const sub of ['home', 'state']) mkdirSync(join(dir, sub), { recursive: true, mode: 0o700 });
    const socketDir = socketDirOf(rec.id);
    mkdirSync(socketDir, { recursive: true, mode: 0o700 });
    entry = {
      sessionId: rec.id, tenant: rec.tenant, runtime: rec.runtime, provider: providerOf(rec), override: undefined, substrate, dir, socketPath: join(socketDir, 'runner.sock'), server: undefined,
      worker: undefined, polled: false, paused: false, pausing: undefined, commands: createCommandQueue(), active: undefined, bundle: undefined,
      idle: undefined, startedAt: new Date().toISOString(),
    };
    const e = entry;
    const server = await listenWorkerSocket(entry.socketPath, { sessionId: rec.id, provider: entry.provider, override: () => e.override }, deps);
    entry.server = server;
    // registered once its socket listens: a failed start leaves nothing half-made behind
    const raced = entries.get(rec.id);
    if (raced) {
      server.close();
      return raced;
    }
    entries.set(rec.id, entry);
    return entry;
  }

  function scheduleIdle(entry: Entry): void {
    clearTimeout(entry.idle);
    entry.idle = setTimeout(() => void pause(entry), deps.idleMs);
    entry.idle.unref();
  }

  function pause(entry: Entry): Promise<void> {
    const worker = entry.worker;
    if (entry.active || !worker || entry.substrate.state(worker) !== 'running' || entry.pausing) return entry.pausing ?? Promise.resolve();
    entry.pausing = (async () => {
      entry.commands.push({ protocol: 1, command: 'export_state' });
      entry.commands.push({ protocol: 1, command: 'shutdown' });
      await entry.substrate.pause(worker, PAUSE_GRACE_MS);
      if (entry.worker === worker) entry.paused = true;
      log.info('sandbox worker paused', { sessionId: entry.sessionId, workerId: worker.workerId });
    })().finally(() => (entry.pausing = undefined));
    return entry.pausing;
  }

  async function* run(rec: SessionRecord, runId: string, body: (url: string) => WorkerRunRequest, signal: AbortSignal): AsyncGenerator<RunEvent> {
    let entry: Entry;
    let runnerUrl: string;
    let request: WorkerRunRequest;
    try {
      await Promise.all([...deps.substrates.values()].map((s) => s.ready()));
      const substrate = substrateFor(rec);
      entry = await ensureEntry(rec, substrate);
      clearTimeout(entry.idle);
      await entry.pausing;
      runnerUrl = await substrate.runnerUrlFor({ sessionId: rec.id });
      // the run is refused before anything starts when no token can be minted (no or bad signing key)
      const mcpToken = await deps.tokens.mint('svc-mcp', { tenant: rec.tenant, sessionId: rec.id }, mcpTokenTtlMs(undefined));
      request = body(`${runnerUrl}/runner/sessions/${encodeURIComponent(rec.id)}/mcp?${SESSION_TOKEN_PARAM}=${mcpToken}`);
      // a per-run model address is reached through the session's socket too, for this run only
      entry.override = request.modelOverride?.baseUrl;
      if (request.modelOverride?.baseUrl) request = { ...request, modelOverride: { ...request.modelOverride, baseUrl: `${runnerUrl}/provider/override` } };
      if (!entry.worker || substrate.state(entry.worker) !== 'running') await launchWorker(launchDeps, entry, rec, runnerUrl);
    } catch (err) {
      yield runEvent('error', { message: `sandbox worker unavailable: ${describeError(err)}` });
      return;
    }
    const active: ActiveRun = { runId, channel: createChannel<RunEvent>(), cancelled: false, uploading: false, delivered: false };
    entry.active = active;
    const onAbort = () => {
      active.cancelled = true;
      active.stopUpload?.();
      // a run command not yet taken is withdrawn
      entry.commands.drop((c) => c.command === 'run' && c.runId === runId);
      active.channel.end();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) onAbort();
    entry.commands.push({ protocol: 1, command: 'run', runId, run: request });
    if (entry.worker && entry.substrate.state(entry.worker) === 'gone' && !active.channel.ended) {
      const tail = entry.worker.stderrTail();
      active.channel.push(runEvent('error', { message: `sandbox worker exited before taking the run${tail ? `: ${tail.split('\n').slice(-3).join(' | ')}` : ''}` }));
      active.channel.end();
    }
    try {
      for await (const event of active.channel) {
        yield event;
        if (isTerminal(event)) return;
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      if (!active.channel.ended) {
        active.cancelled = true;
        active.stopUpload?.();
        active.channel.end();
      }
      if (entry.active === active) {
        entry.active = undefined;
        entry.override = undefined;
      }
      if (entries.get(entry.sessionId) === entry) scheduleIdle(entry);
    }
  }

  async function receiveEvents(sessionId: string, runId: string, body: ReadableStream<Uint8Array> | null): Promise<void> {
    const entry = entries.get(sessionId);
    const active = entry?.active;
    if (!active || active.runId !== runId || active.cancelled || active.uploading || active.channel.ended) {
      await body?.cancel().catch(() => {});
      throw new UploadError(409, `stale or cancelled run: ${runId || '(no X-Svc-Run-Id)'} is not the active run of session ${sessionId}`);
    }
    active.uploading = true;
    const { failure, terminal } = await readEventUpload(body, limits, {
      onEvent: (event) => active.channel.push(event),
      onStoppable: (stop) => (active.stopUpload = stop ? () => stop(new UploadError(409, `run ${runId} was cancelled`)) : undefined),
    });
    if (failure && failure.status !== 409 && !active.channel.ended) {
      // a broken limit fails the run rather than letting it look complete
      active.channel.push(runEvent('error', { message: `sandbox worker ${failure.message} (${failure.status})` }));
    } else if (!failure && !terminal && !active.channel.ended) {
      // a worker killed mid-run (by a sandbox limit) loses its upload first: its exit, when it follows at once, says why
      const worker = entry.worker;
      let timer: NodeJS.Timeout | undefined;
      if (worker) await Promise.race([worker.exited, new Promise((r) => (timer = setTimeout(r, EXIT_GRACE_MS)))]);
      clearTimeout(timer);
      if (!active.channel.ended) active.channel.push(runEvent('error', { message: 'run cancelled: the worker closed its event upload before a result' }));
    }
    active.channel.end();
    if (failure) throw failure;
  }

  /** Releases under way (a deleted session's): the runner's close waits for them too, so nothing is left half-removed. */
  const releasing = new Set<Promise<void>>();
  function release(sessionId: string): Promise<void> {
    const done = releaseNow(sessionId);
    releasing.add(done);
    void done.finally(() => releasing.delete(done)).catch(() => {});
    return done;
  }

  async function releaseNow(sessionId: string): Promise<void> {
    const entry = entries.get(sessionId);
    if (!entry) return;
    entries.delete(sessionId);
    clearTimeout(entry.idle);
    entry.active?.channel.push(runEvent('error', { message: 'session shut down' }));
    entry.active?.channel.end();
    entry.commands.answerWaiting({ protocol: 1, command: 'shutdown' });
    if (entry.worker) await entry.substrate.stop(entry.worker).catch(() => {});
    await entry.substrate.forget?.(sessionId).catch((err) => log.warn('releasing a sandbox session on its substrate failed', { sessionId, error: describeError(err) }));
    await new Promise<void>((resolve) => (entry.server ? entry.server.close(() => resolve()) : resolve()));
    entry.server?.closeAllConnections();
    rmSync(entry.dir, { recursive: true, force: true });
    rmSync(join(entry.socketPath, '..'), { recursive: true, force: true });
  }

  return {
    offered,
    defaultSubstrate: deps.defaultSubstrate,
    async ready() {
      await Promise.all([...deps.substrates.values()].map((s) => s.ready()));
    },
    run,
    lease(sessionId, tenant) {
      const entry = entries.get(sessionId);
      // a session whose worker was never launched (before its first run, or refused) has no lease
      if (!entry?.worker || (tenant !== undefined && entry.tenant !== tenant)) return undefined;
      return toLease(entry);
    },
    leases(tenant) {
      return [...entries.values()].filter((e) => e.worker && (tenant === undefined || e.tenant === tenant)).map(toLease).sort((a, b) => a.sessionId.localeCompare(b.sessionId));
    },
    async invalidate(provider, sandboxId) {
      let n = 0;
      for (const entry of entries.values()) {
        if (entry.substrate.id !== provider || entry.worker?.workerId !== sandboxId) continue;
        n++;
        entry.paused = false;
        await entry.substrate.stop(entry.worker);
      }
      return n;
    },
    state: (sessionId) => entries.get(sessionId)?.bundle,
    async hydrate(rec, bundle) {
      const dir = join(deps.dataDir, 'sandboxes', dirName(rec.id));
      const entry = entries.get(rec.id);
      if (entry) {
        clearTimeout(entry.idle);
        await entry.pausing;
        const worker = entry.worker;
        if (worker && entry.substrate.state(worker) === 'running') {
          // stopped without a last save (which would overwrite the bundle); the next run resumes from the bundle
          await entry.substrate.stop(worker);
          if (entry.worker === worker) entry.paused = true;
        }
        entry.bundle = bundle;
        writeStateToDisk(entry, bundle);
        return;
      }
      // no worker yet: the first one starts from this bundle
      mkdirSync(join(dir, 'state'), { recursive: true, mode: 0o700 });
      writeStateToDisk({ dir, runtime: rec.runtime } as Entry, bundle);
    },
    release,
    commandsOf(rec) {
      if (rec.profile.workerMode !== 'sandbox') return undefined;
      const substrate = deps.substrates.get(rec.profile.workerSubstrate ?? deps.defaultSubstrate);
      const exec = substrate?.exec;
      return exec ? (spec) => exec(rec.id, spec) : undefined;
    },
    async close() {
      await Promise.all([...entries.keys()].map((id) => release(id)));
      await Promise.allSettled([...releasing]);
      if (socketRoot) rmSync(socketRoot, { recursive: true, force: true });
    },
    tenantOf: (sessionId) => entries.get(sessionId)?.tenant,
    async nextCommand(sessionId, signal) {
      const entry = entries.get(sessionId);
      if (!entry) return { protocol: 1, command: 'shutdown' };
      entry.polled = true;
      // a worker polls again only once it is done with a run: one that took the run and never uploaded has lost it
      const active = entry.active;
      if (active?.delivered && !active.uploading && !active.channel.ended) {
        active.channel.push(runEvent('error', { message: `the sandbox worker lost run ${active.runId} (it polled again without uploading its events)` }));
        active.channel.end();
      }
      const cmd = await entry.commands.next(signal, deps.pollMs);
      if (cmd?.command === 'run' && entry.active?.runId === cmd.runId) entry.active.delivered = true;
      return cmd;
    },
    receiveEvents,
    storeState(sessionId, bundle) {
      const entry = entries.get(sessionId);
      if (entry) entry.bundle = bundle;
    },
  };
}

/** A run id for a subtask that names none: the worker echoes it in X-Svc-Run-Id. */
export const newRunId = () => `run-${randomId(16)}`;
