import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { connect, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { withTerminal, type RunEvent } from '../../contracts/run-event.ts';
import {
  callbackPaths,
  RUN_ID_HEADER,
  STATE_FILE,
  STATE_META_FILE,
  WORKER_PROTOCOL,
  WORKER_PROTOCOL_HEADER,
  type StateMeta,
  type WorkerCommand,
} from '../../contracts/sandbox-worker.ts';
import { RUNTIME_SESSION_HEADER, type Runtime } from '../../contracts/worker.ts';
import { describeError } from '../../shared/errors.ts';
import { createLogger } from '../../shared/log.ts';
import { ndjsonStream } from '../../shared/ndjson.ts';
import type { WorkerRuntime } from './runtime.ts';
import { createRuntimes, type WorkerDeps } from './worker.ts';

/**
 * The agent-worker in outbound client mode (seed 000, "Agent-worker API"): with SVC_RUNNER_URL, SVC_WORKER_TOKEN and
 * SVC_SESSION_ID it binds no port and serves one session by calling the runner: it long-polls `next-run`, streams a
 * run's events to `events` (X-Svc-Run-Id), and keeps its state in SVC_STATE_DIR — restored before the first poll,
 * written after each run and on `export_state`, with a durable copy uploaded to `state` (best effort). When the
 * runner closes the event upload, the run is cancelled. `shutdown` (or SIGTERM) saves the state and ends the process.
 *
 * In a sandbox without network (the runner's process substrate) SVC_WORKER_RELAY names the runner's callback socket:
 * the worker relays 127.0.0.1:<port> of its own loopback to it, and the runner URL points there.
 */
export interface OutboundWorker {
  /** Settles when the worker has stopped (shutdown command, `stop()`, or a runner that refuses its token). */
  done: Promise<void>;
  stop(): Promise<void>;
}

const log = createLogger('worker:outbound');
const RETRY_MIN_MS = 250;
const RETRY_MAX_MS = 5_000;
/** A runner that has not answered a poll for this long is gone (its workers end with it). */
const GIVE_UP_MS = 120_000;

export class OutboundConfigError extends Error {}

export async function startOutboundWorker(deps: WorkerDeps): Promise<OutboundWorker> {
  const { config } = deps;
  if (config.protocol !== WORKER_PROTOCOL) throw new OutboundConfigError(`SVC_WORKER_PROTOCOL: unsupported worker protocol ${config.protocol} (this worker speaks ${WORKER_PROTOCOL})`);
  if (!config.runnerUrl || !config.workerToken) throw new OutboundConfigError('outbound mode needs SVC_RUNNER_URL and SVC_WORKER_TOKEN');
  if (!config.sessionId) throw new OutboundConfigError('SVC_SESSION_ID: required in outbound worker mode');
  const sessionId = config.sessionId;
  const base = config.runnerUrl.replace(/\/+$/, '');
  const paths = callbackPaths(sessionId);
  const auth = { authorization: `Bearer ${config.workerToken}` };
  const stopping = new AbortController();
  const runtimes = createRuntimes(deps);
  const relay = config.relay ? await startRelay(config.relay.port, config.relay.socketPath) : undefined;

  async function restore(): Promise<void> {
    let meta: StateMeta;
    let bytes: Buffer;
    try {
      meta = JSON.parse(await readFile(join(config.stateDir, STATE_META_FILE), 'utf8')) as StateMeta;
      bytes = await readFile(join(config.stateDir, STATE_FILE));
    } catch {
      return; // nothing saved yet
    }
    const runtime = runtimes.get(meta.runtime as Runtime);
    if (!runtime) return log.warn('saved state is for a runtime this worker does not serve', { runtime: meta.runtime });
    try {
      await runtime.importState(sessionId, new Uint8Array(bytes));
      log.info('state restored', { sessionId, runtime: meta.runtime, bytes: bytes.byteLength });
    } catch (err) {
      log.warn('restoring state failed', { sessionId, error: describeError(err) });
    }
  }

  /** Writes the runtime's bundle to the state dir (atomically) and uploads a durable copy; best effort. */
  async function saveState(runtime: WorkerRuntime): Promise<void> {
    let bundle;
    try {
      bundle = await runtime.exportState(sessionId);
    } catch (err) {
      return log.warn('exporting state failed', { sessionId, error: describeError(err) });
    }
    if (!bundle) return;
    const bytes = typeof bundle.body === 'string' ? Buffer.from(bundle.body) : Buffer.from(bundle.body);
    const meta: StateMeta = { runtime: runtime.id, contentType: bundle.contentType, runtimeSessionId: bundle.runtimeSessionId, savedAt: new Date().toISOString() };
    try {
      await mkdir(config.stateDir, { recursive: true, mode: 0o700 });
      await writeFile(join(config.stateDir, `${STATE_FILE}.tmp`), bytes);
      await rename(join(config.stateDir, `${STATE_FILE}.tmp`), join(config.stateDir, STATE_FILE));
      await writeFile(join(config.stateDir, STATE_META_FILE), JSON.stringify(meta));
    } catch (err) {
      log.warn('writing state to disk failed', { sessionId, error: describeError(err) });
    }
    try {
      const headers = { ...auth, 'content-type': bundle.contentType, [RUNTIME_SESSION_HEADER]: bundle.runtimeSessionId };
      const res = await fetch(base + paths.state, { method: 'POST', headers, body: bytes, signal: AbortSignal.timeout(30_000) });
      await res.body?.cancel();
      if (!res.ok) log.warn('state upload refused', { sessionId, status: res.status });
    } catch (err) {
      log.warn('state upload failed', { sessionId, error: describeError(err) });
    }
  }

  const saveAll = async () => {
    for (const runtime of runtimes.values()) await saveState(runtime);
  };

  async function run(cmd: Extract<WorkerCommand, { command: 'run' }>): Promise<void> {
    const runtime = runtimes.get(cmd.run.profile.runtime);
    const abort = new AbortController();
    const onStop = () => abort.abort(new Error('worker shutting down'));
    stopping.signal.addEventListener('abort', onStop, { once: true });
    async function* source(): AsyncGenerator<RunEvent> {
      if (!runtime) throw new Error(`runtime ${cmd.run.profile.runtime} is not served by this worker (MODE=${config.mode})`);
      yield* runtime.run(cmd.run, abort.signal);
    }
    let saved = false;
    async function* savedBeforeTerminal(): AsyncGenerator<RunEvent> {
      for await (const event of withTerminal(source(), describeError)) {
        // the state is on disk (and uploaded) before the run is reported over: a worker lost right after keeps it
        if ((event.type === 'result' || event.type === 'error') && runtime) {
          await saveState(runtime);
          saved = true;
        }
        yield event;
      }
    }
    const body = ndjsonStream(savedBeforeTerminal(), () => abort.abort(new Error('event upload closed')));
    try {
      const res = await fetch(base + paths.events, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/x-ndjson', [RUN_ID_HEADER]: cmd.runId },
        body,
        duplex: 'half',
        signal: stopping.signal,
      } as RequestInit);
      // an answer while the run is still going means the runner closed the upload: the run is cancelled
      if (!res.ok) log.info('event upload ended by the runner', { sessionId, runId: cmd.runId, status: res.status, error: await res.text().catch(() => '') });
      else await res.body?.cancel();
    } catch (err) {
      log.warn('event upload failed', { sessionId, runId: cmd.runId, error: describeError(err) });
    } finally {
      abort.abort(new Error('event upload closed'));
      stopping.signal.removeEventListener('abort', onStop);
    }
    if (runtime && !saved) await saveState(runtime);
  }

  async function poll(): Promise<WorkerCommand | undefined | 'refused'> {
    const res = await fetch(base + paths.nextRun, { headers: { ...auth, [WORKER_PROTOCOL_HEADER]: String(WORKER_PROTOCOL) }, signal: stopping.signal });
    if (res.status === 204) return undefined;
    if (res.status === 401 || res.status === 404 || res.status === 400) {
      log.error('the runner refused this worker', { sessionId, status: res.status, error: await res.text().catch(() => '') });
      return 'refused';
    }
    if (!res.ok) throw new Error(`next-run: ${res.status} ${await res.text().catch(() => '')}`);
    return (await res.json()) as WorkerCommand;
  }

  async function loop(): Promise<void> {
    await restore();
    let delay = RETRY_MIN_MS;
    let failingSince: number | undefined;
    while (!stopping.signal.aborted) {
      let cmd: Awaited<ReturnType<typeof poll>>;
      try {
        cmd = await poll();
        delay = RETRY_MIN_MS;
        failingSince = undefined;
      } catch (err) {
        if (stopping.signal.aborted) break;
        failingSince ??= Date.now();
        if (Date.now() - failingSince > GIVE_UP_MS) {
          log.error('the runner has not answered for too long; stopping', { sessionId, error: describeError(err) });
          break;
        }
        log.warn('next-run failed; retrying', { sessionId, error: describeError(err), retryInMs: delay });
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(delay * 2, RETRY_MAX_MS);
        continue;
      }
      if (cmd === 'refused') break;
      if (!cmd) continue;
      if (cmd.command === 'run') await run(cmd);
      else if (cmd.command === 'export_state') await saveAll();
      else if (cmd.command === 'shutdown') break;
    }
    if (!stopping.signal.aborted) await saveAll();
    stopping.abort(new Error('worker stopped'));
    await Promise.allSettled([...runtimes.values()].map((r) => r.close()));
    await new Promise<void>((resolve) => (relay ? relay.close(() => resolve()) : resolve()));
  }

  const done = loop();
  return {
    done,
    async stop() {
      if (!stopping.signal.aborted) {
        stopping.abort(new Error('worker stopping'));
        await saveAll();
      }
      await done;
    },
  };
}

/** 127.0.0.1:<port> → the unix socket: the sandboxed worker's only way out. */
function startRelay(port: number, socketPath: string): Promise<Server> {
  const open = new Set<{ destroy(): void }>();
  const server = createServer((inbound) => {
    const outbound = connect(socketPath);
    open.add(inbound);
    open.add(outbound);
    inbound.pipe(outbound).pipe(inbound);
    const end = () => {
      inbound.destroy();
      outbound.destroy();
    };
    inbound.on('error', end);
    outbound.on('error', end);
    inbound.on('close', end);
    outbound.on('close', end);
    inbound.on('close', () => open.delete(inbound));
    outbound.on('close', () => open.delete(outbound));
  });
  // closing the relay ends its keep-alive connections too, or the process would wait for them to time out
  const close = server.close.bind(server);
  server.close = ((cb?: (err?: Error) => void) => {
    close(cb);
    for (const s of open) s.destroy();
    return server;
  }) as Server['close'];
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}
