import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getRequestListener } from '@hono/node-server';
import { isTerminal, runEvent, type RunEvent } from '../../../../contracts/run-event.ts';
import {
  EVENT_LINE_LIMIT_BYTES,
  EVENT_UPLOAD_LIMIT_BYTES,
  EVENT_UPLOAD_MAX_MS,
  STATE_FILE,
  STATE_META_FILE,
  type StateMeta,
  type WorkerCommand,
  type WorkerLease,
  type WorkerLeaseState,
} from '../../../../contracts/sandbox-worker.ts';
import type { PoolSpec } from '../../../../contracts/runner.wire.ts';
import type { StateBundle } from '../../../../contracts/worker.client.ts';
import type { WorkerRunRequest } from '../../../../contracts/worker.ts';
import { describeError } from '../../../../shared/errors.ts';
import { randomId } from '../../../../shared/ids.ts';
import { createLogger } from '../../../../shared/log.ts';
import type { Registry } from '../../registry/registry.store.ts';
import type { SessionRecord } from '../../sessions/sessions.store.ts';
import type { LaunchedWorker, WorkerSubstrate } from '../../substrates/substrate.ts';
import { dirName } from '../../vfs/vfs.manager.ts';
import type { VfsManager } from '../../vfs/index.ts';
import { SESSION_TOKEN_PARAM } from '../../mcp/session-token.ts';
import { createChannel, type Channel } from './channel.ts';
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
  /** Serves the callback routes and the session MCP endpoint (what arrives on a session's callback socket). */
  callbacks: (req: Request) => Response | Promise<Response>;
  vfs: VfsManager;
  pools: Registry<PoolSpec>;
  idleMs: number;
  pollMs: number;
  stateCapBytes: number;
  limits?: Partial<UploadLimits>;
}

export interface UploadLimits {
  lineBytes: number;
  totalBytes: number;
  maxMs: number;
}

interface ActiveRun {
  runId: string;
  channel: Channel<RunEvent>;
  cancelled: boolean;
  uploading: boolean;
  /** Stops an upload in progress (the run was cancelled). */
  stopUpload?: () => void;
}

interface Waiter {
  give(cmd: WorkerCommand): boolean;
}

interface Entry {
  sessionId: string;
  tenant: string;
  runtime: string;
  /** The model provider of the session's profile: the only one its worker is forwarded to. */
  provider: string | undefined;
  /** The base URL of the active run's per-run model (the /v1 agents API), reached as `/provider/override`. */
  override: string | undefined;
  substrate: WorkerSubstrate;
  dir: string;
  socketPath: string;
  server: Server | undefined;
  worker: LaunchedWorker | undefined;
  /** The worker has polled at least once: it is up. */
  polled: boolean;
  paused: boolean;
  pausing: Promise<void> | undefined;
  queue: WorkerCommand[];
  waiters: Set<Waiter>;
  active: ActiveRun | undefined;
  bundle: StateBundle | undefined;
  idle: NodeJS.Timeout | undefined;
  startedAt: string;
}

/** The provider variables of each model provider: [base URL, key, default base URL]. */
const PROVIDER_VARS: Record<string, { base: string; key: string; defaultBase?: string }> = {
  openai: { base: 'OPENAI_BASE_URL', key: 'OPENAI_API_KEY', defaultBase: 'https://api.openai.com/v1' },
  anthropic: { base: 'ANTHROPIC_BASE_URL', key: 'ANTHROPIC_API_KEY', defaultBase: 'https://api.anthropic.com/v1' },
  'openai-compatible': { base: 'OPENAI_COMPATIBLE_BASE_URL', key: 'OPENAI_COMPATIBLE_API_KEY' },
};
const PAUSE_GRACE_MS = 10_000;

/** `openai-compatible` of `openai-compatible:fake-model`; undefined for a model without a known provider. */
function providerOf(rec: SessionRecord): string | undefined {
  const model = rec.profile.model ?? '';
  const name = model.slice(0, Math.max(0, model.indexOf(':')));
  return Object.hasOwn(PROVIDER_VARS, name) ? name : undefined;
}
const log = createLogger('runner:sandbox-workers');

export class UploadError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

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
  hydrate(rec: SessionRecord, bundle: StateBundle): void;
  release(sessionId: string): Promise<void>;
  close(): Promise<void>;
  /** Callback handlers (routes in callbacks.routes.ts); the token has been checked. */
  tenantOf(sessionId: string): string | undefined;
  nextCommand(sessionId: string, signal: AbortSignal): Promise<WorkerCommand | undefined>;
  receiveEvents(sessionId: string, runId: string, body: ReadableStream<Uint8Array> | null): Promise<void>;
  storeState(sessionId: string, bundle: StateBundle): void;
}

export function createSandboxWorkers(deps: SandboxWorkersDeps): SandboxWorkers {
  const limits: UploadLimits = { lineBytes: EVENT_LINE_LIMIT_BYTES, totalBytes: EVENT_UPLOAD_LIMIT_BYTES, maxMs: EVENT_UPLOAD_MAX_MS, ...deps.limits };
  const entries = new Map<string, Entry>();
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

  /** What arrives on a session's callback socket: its callbacks, its MCP endpoint, and its model provider. */
  function socketHandler(entry: Entry) {
    const id = encodeURIComponent(entry.sessionId);
    return async (req: Request): Promise<Response> => {
      const url = new URL(req.url);
      const provider = /^\/provider\/([a-z-]+)(\/.*)?$/.exec(url.pathname);
      if (provider && provider[1] === 'override' && entry.override) return forward(entry.override, 'the run\'s model', provider[2] ?? '', url.search, req);
      if (provider && provider[1] === entry.provider) return forwardToProvider(provider[1], provider[2] ?? '', url.search, req);
      if (url.pathname.startsWith(`/worker/sessions/${id}/`) || url.pathname === `/runner/sessions/${id}/mcp`) return deps.callbacks(req);
      return Response.json({ error: `not reachable from a sandbox worker: ${url.pathname}` }, { status: 404 });
    };
  }

  async function forwardToProvider(name: string, rest: string, search: string, req: Request): Promise<Response> {
    const vars = PROVIDER_VARS[name];
    const base = vars && (deps.providerEnv[vars.base] || vars.defaultBase);
    if (!base) return Response.json({ error: `model provider ${name} is not configured on this runner` }, { status: 404 });
    return forward(base, `model provider ${name}`, rest, search, req);
  }

  async function forward(base: string, name: string, rest: string, search: string, req: Request): Promise<Response> {
    const headers = new Headers(req.headers);
    headers.delete('host');
    headers.delete('connection');
    try {
      const res = await fetch(base.replace(/\/+$/, '') + rest + search, {
        method: req.method,
        headers,
        body: req.body,
        signal: req.signal,
        ...(req.body ? { duplex: 'half' } : {}),
      } as RequestInit);
      const out = new Headers(res.headers);
      // fetch has decoded the body already
      out.delete('content-encoding');
      out.delete('content-length');
      return new Response(res.body, { status: res.status, headers: out });
    } catch (err) {
      return Response.json({ error: `${name} unreachable: ${describeError(err)}` }, { status: 502 });
    }
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
      worker: undefined, polled: false, paused: false, pausing: undefined, queue: [], waiters: new Set(), active: undefined, bundle: undefined,
      idle: undefined, startedAt: new Date().toISOString(),
    };
    const server = createServer(getRequestListener(socketHandler(entry)));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(entry.socketPath, () => resolve());
    });
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

  function liveState(entry: Entry): WorkerLeaseState {
    if (entry.paused) return 'paused';
    if (!entry.worker) return 'gone';
    const s = entry.substrate.state(entry.worker);
    if (s === 'unknown') return 'unknown';
    if (s === 'gone') return entry.pausing ? 'paused' : 'gone';
    return entry.polled ? 'running' : 'starting';
  }

  const toLease = (entry: Entry): WorkerLease => ({
    sessionId: entry.sessionId,
    substrate: entry.substrate.id,
    workerId: entry.worker?.workerId ?? '',
    runtime: entry.runtime,
    state: liveState(entry),
    startedAt: entry.worker?.startedAt ?? entry.startedAt,
  });

  function enqueue(entry: Entry, cmd: WorkerCommand): void {
    for (const w of entry.waiters) {
      entry.waiters.delete(w);
      if (w.give(cmd)) return;
    }
    entry.queue.push(cmd);
  }

  /** The worker's environment: outbound mode for this session, and its own model provider only. */
  async function workerEnv(rec: SessionRecord, runnerUrl: string): Promise<Record<string, string>> {
    const token = await deps.tokens.mint('svc-worker', { tenant: rec.tenant, sessionId: rec.id });
    const env: Record<string, string> = {
      SVC_RUNNER_URL: runnerUrl,
      SVC_WORKER_TOKEN: token,
      SVC_SESSION_ID: rec.id,
      SVC_WORKER_PROTOCOL: '1',
      MODE: rec.runtime,
      SVC_LOG_LEVEL: 'warn',
    };
    const provider = providerOf(rec);
    const vars = provider ? PROVIDER_VARS[provider] : undefined;
    if (vars && (deps.providerEnv[vars.base] || vars.defaultBase)) {
      env[vars.base] = `${runnerUrl}/provider/${provider}`;
      if (deps.providerEnv[vars.key]) env[vars.key] = deps.providerEnv[vars.key];
    }
    return env;
  }

  async function launch(entry: Entry, rec: SessionRecord, runnerUrl: string): Promise<void> {
    const env = await workerEnv(rec, runnerUrl);
    const plan = await deps.vfs.view(rec, deps.pools.list(rec.tenant)).sandboxMounts();
    const resuming = entry.paused;
    try {
      const spec = { sessionId: rec.id, runtime: rec.runtime, image: rec.profile.workerImage, env, sessionDir: entry.dir, callbackSocket: entry.socketPath, files: plan.mounts };
      entry.worker = resuming ? entry.substrate.resume(spec, runnerUrl) : entry.substrate.launch(spec, runnerUrl);
    } finally {
      plan.close();
    }
    entry.polled = false;
    entry.paused = false;
    entry.queue = [];
    const worker = entry.worker;
    log.info(resuming ? 'sandbox worker resumed' : 'sandbox worker launched', { sessionId: rec.id, workerId: worker.workerId, substrate: entry.substrate.id });
    worker.exited.then(({ code, signal }) => {
      if (entry.worker !== worker) return;
      const active = entry.active;
      if (active && !active.channel.ended) {
        const tail = worker.stderrTail();
        active.channel.push(runEvent('error', { message: `sandbox worker exited (${signal ?? `code ${code}`}) before the run finished${tail ? `: ${tail.split('\n').slice(-3).join(' | ')}` : ''}` }));
        active.channel.end();
      }
      for (const w of entry.waiters) w.give({ protocol: 1, command: 'shutdown' });
      entry.waiters.clear();
    });
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
      enqueue(entry, { protocol: 1, command: 'export_state' });
      enqueue(entry, { protocol: 1, command: 'shutdown' });
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
      if (!entry.worker || substrate.state(entry.worker) !== 'running') await launch(entry, rec, runnerUrl);
    } catch (err) {
      yield runEvent('error', { message: `sandbox worker unavailable: ${describeError(err)}` });
      return;
    }
    const active: ActiveRun = { runId, channel: createChannel<RunEvent>(), cancelled: false, uploading: false };
    entry.active = active;
    const onAbort = () => {
      active.cancelled = true;
      active.stopUpload?.();
      // a run command not yet taken is withdrawn
      entry.queue = entry.queue.filter((c) => !(c.command === 'run' && c.runId === runId));
      active.channel.end();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) onAbort();
    enqueue(entry, { protocol: 1, command: 'run', runId, run: request });
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
    if (!body) {
      active.channel.push(runEvent('error', { message: 'run cancelled: the worker closed its event upload before a result' }));
      active.channel.end();
      return;
    }
    const reader = body.getReader();
    let failure: UploadError | undefined;
    const stop = (err: UploadError) => {
      failure ??= err;
      reader.cancel().catch(() => {});
    };
    active.stopUpload = () => stop(new UploadError(409, `run ${runId} was cancelled`));
    const timer = setTimeout(() => stop(new UploadError(408, `event upload open longer than ${Math.round(limits.maxMs / 60_000)} minutes`)), limits.maxMs);
    let total = 0;
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let terminal = false;
    let lineNo = 0;
    const handleLine = (line: Buffer) => {
      lineNo++;
      const text = line.toString('utf8').trim();
      if (!text || terminal) return;
      let event: RunEvent;
      try {
        event = JSON.parse(text) as RunEvent;
        if (!event || typeof event !== 'object' || typeof event.type !== 'string') throw new Error('no type');
      } catch {
        return stop(new UploadError(400, `event upload: line ${lineNo} is not a run event`));
      }
      active.channel.push({ ...event, ts: event.ts ?? new Date().toISOString() });
      if (isTerminal(event)) terminal = true;
    };
    try {
      while (!failure) {
        const { value, done } = await reader.read();
        if (done || failure) break;
        total += value.byteLength;
        if (total > limits.totalBytes) {
          stop(new UploadError(413, `event upload over ${limits.totalBytes} bytes`));
          break;
        }
        const chunk = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
        let start = 0;
        while (!failure) {
          const nl = chunk.indexOf(10, start);
          const piece = chunk.subarray(start, nl < 0 ? chunk.length : nl);
          if (pendingBytes + piece.length > limits.lineBytes) {
            stop(new UploadError(413, `event upload line over ${limits.lineBytes} bytes`));
            break;
          }
          if (nl < 0) {
            if (piece.length) pending.push(Buffer.from(piece));
            pendingBytes += piece.length;
            break;
          }
          handleLine(pending.length ? Buffer.concat([...pending, piece]) : piece);
          pending = [];
          pendingBytes = 0;
          start = nl + 1;
        }
      }
      if (!failure && pendingBytes) handleLine(Buffer.concat(pending));
    } catch (err) {
      // the worker went away mid-upload: the same as closing it
      log.debug('event upload broke', { sessionId, runId, error: describeError(err) });
    } finally {
      clearTimeout(timer);
      active.stopUpload = undefined;
      reader.releaseLock?.();
    }
    if (failure && failure.status !== 409 && !active.channel.ended) {
      // a broken limit fails the run rather than letting it look complete
      active.channel.push(runEvent('error', { message: `sandbox worker ${failure.message} (${failure.status})` }));
    } else if (!failure && !terminal && !active.channel.ended) {
      active.channel.push(runEvent('error', { message: 'run cancelled: the worker closed its event upload before a result' }));
    }
    active.channel.end();
    if (failure) throw failure;
  }

  function writeStateToDisk(entry: Entry, bundle: StateBundle): void {
    const dir = join(entry.dir, 'state');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const meta: StateMeta = { runtime: entry.runtime, contentType: bundle.contentType, runtimeSessionId: bundle.runtimeSessionId, savedAt: new Date().toISOString() };
    writeFileSync(join(dir, STATE_FILE), bundle.bytes);
    writeFileSync(join(dir, STATE_META_FILE), JSON.stringify(meta));
  }

  async function release(sessionId: string): Promise<void> {
    const entry = entries.get(sessionId);
    if (!entry) return;
    entries.delete(sessionId);
    clearTimeout(entry.idle);
    entry.active?.channel.push(runEvent('error', { message: 'session shut down' }));
    entry.active?.channel.end();
    for (const w of entry.waiters) w.give({ protocol: 1, command: 'shutdown' });
    if (entry.worker) await entry.substrate.stop(entry.worker).catch(() => {});
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
    hydrate(rec, bundle) {
      const dir = join(deps.dataDir, 'sandboxes', dirName(rec.id));
      const entry = entries.get(rec.id);
      if (entry) {
        entry.bundle = bundle;
        writeStateToDisk(entry, bundle);
        return;
      }
      // no worker yet: the first one starts from this bundle
      mkdirSync(join(dir, 'state'), { recursive: true, mode: 0o700 });
      writeStateToDisk({ dir, runtime: rec.runtime } as Entry, bundle);
    },
    release,
    async close() {
      await Promise.all([...entries.keys()].map((id) => release(id)));
      if (socketRoot) rmSync(socketRoot, { recursive: true, force: true });
    },
    tenantOf: (sessionId) => entries.get(sessionId)?.tenant,
    nextCommand(sessionId, signal) {
      const entry = entries.get(sessionId);
      if (!entry) return Promise.resolve({ protocol: 1, command: 'shutdown' });
      entry.polled = true;
      const queued = entry.queue.shift();
      if (queued) return Promise.resolve(queued);
      return new Promise((resolve) => {
        let timer: NodeJS.Timeout | undefined;
        const waiter: Waiter = {
          give(cmd) {
            if (signal.aborted) return false;
            done(cmd);
            return true;
          },
        };
        const done = (cmd: WorkerCommand | undefined) => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          entry.waiters.delete(waiter);
          resolve(cmd);
        };
        const onAbort = () => done(undefined);
        timer = setTimeout(() => done(undefined), deps.pollMs);
        signal.addEventListener('abort', onAbort, { once: true });
        entry.waiters.add(waiter);
      });
    },
    receiveEvents,
    storeState(sessionId, bundle) {
      const entry = entries.get(sessionId);
      if (entry) entry.bundle = bundle;
    },
  };
}

/** For the runner's info: `randomId` keeps run ids unique when a subtask names none. */
export const newRunId = () => `run-${randomId(16)}`;
