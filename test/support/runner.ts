import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Config } from '../../src/config/config.ts';
import type { RunEvent } from '../../src/contracts/run-event.ts';
import { createRunnerClient, type RunnerClient } from '../../src/contracts/runner.client.ts';
import { createRunner, type Runner, type RunnerDeps } from '../../src/modules/runner/index.ts';
import { createWorker, type Worker } from '../../src/modules/worker/index.ts';
import { fakeProviderEnv, type FakeProvider } from './fake-provider.ts';
import { listen, type Listening } from './listen.ts';
import { workerConfig } from './worker.ts';

/**
 * Test helpers for the runner over real HTTP: a worker on a port (that can be killed like a crashed process), a
 * runner on a port pointed at it, and the conductor-side runner client, all stopped by `stopAll()`.
 */
export const MODEL = 'openai-compatible:fake-model';
export const TENANT = 'acme';
export const INTERNAL_TOKEN = 'internal-secret';

/** A fresh data dir for a runner's VirtualFS (created only when a tool touches a file). */
export function testDataDir(): string {
  return join(tmpdir(), `svc-runner-flow-${process.pid}-${randomUUID()}`);
}

/** A runner's settings in tests: a fresh data dir, the command sandbox on. */
export function runnerDefaults(): Config['runner'] {
  const path = process.env.PATH ?? '/usr/bin:/bin';
  return { publicUrl: undefined, workerUrl: undefined, workerUrlByRuntime: {}, stateCapBytes: 1024 * 1024, dataDir: testDataDir(), conductorUrl: undefined, adoptGraceMs: 60_000, sandbox: 'bwrap', searchPath: path };
}

export interface WorkerOnPort {
  url: string;
  worker: Worker;
  /** Drops the worker's listening socket and every open connection, as a crashed process would. */
  kill(): Promise<void>;
}

export interface RunnerOnPort {
  runner: Runner;
  http: Listening;
  client: RunnerClient;
}

export function runnerHarness(fake: () => FakeProvider) {
  const stoppers: Array<() => Promise<void>> = [];
  // Every provider of the general runtime points at the one fake, so a profile's model picks the wire format.
  const providerEnv = () => fakeProviderEnv(fake());

  async function startWorker(): Promise<WorkerOnPort> {
    const worker = createWorker({ config: workerConfig({ providerEnv: providerEnv() }) });
    const http = await listen(worker.app.fetch);
    let killed = false;
    const kill = async () => {
      if (killed) return;
      killed = true;
      await http.close();
    };
    stoppers.push(async () => {
      await kill();
      await worker.close();
    });
    return { url: http.url, worker, kill };
  }

  /** A runner on a port, with profile `helper` (general runtime, the fake model) stored for TENANT. */
  async function startRunner(config: Partial<Config['runner']>, extra: Pick<RunnerDeps, 'sandboxLimits'> = {}): Promise<RunnerOnPort> {
    let runner!: Runner;
    // the runner's hash and MCP URLs derive from the URL it is reached at, known only once it listens
    const http = await listen((req) => runner.app.fetch(req));
    runner = createRunner({
      config: { ...runnerDefaults(), publicUrl: http.url, ...config },
      internalToken: INTERNAL_TOKEN,
      publicUrl: http.url,
      version: 'test',
      probeIntervalMs: 0,
      ...extra,
    });
    stoppers.push(async () => {
      await runner.close();
      await http.close();
    });
    const client = createRunnerClient({ baseUrl: http.url, internalToken: INTERNAL_TOKEN });
    await client.putProfile(TENANT, { name: 'helper', runtime: 'general', model: MODEL, systemPrompt: 'You help.' });
    return { runner, http, client };
  }

  /** Runner and worker in one process, the `--role=all` wiring: the runner reaches the worker through its `app.fetch`. */
  async function startInProcess(): Promise<RunnerClient> {
    const worker = createWorker({ config: workerConfig({ providerEnv: providerEnv() }) });
    const runner = createRunner({
      config: runnerDefaults(),
      internalToken: INTERNAL_TOKEN,
      publicUrl: 'http://svc.local:8080',
      version: 'test',
      workerFetch: (req) => worker.app.fetch(req),
      probeIntervalMs: 0,
    });
    stoppers.push(async () => {
      await runner.close();
      await worker.close();
    });
    const client = createRunnerClient({ baseUrl: 'http://svc.local:8080', fetch: (req) => runner.app.fetch(req), internalToken: INTERNAL_TOKEN });
    await client.putProfile(TENANT, { name: 'helper', runtime: 'general', model: MODEL });
    return client;
  }

  async function stopAll(): Promise<void> {
    for (const stop of stoppers.splice(0).reverse()) await stop();
  }

  return { startWorker, startRunner, startInProcess, stopAll };
}

export async function collect(events: AsyncIterable<RunEvent>): Promise<RunEvent[]> {
  const out: RunEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

export const terminals = (events: readonly RunEvent[]) => events.filter((e) => e.type === 'result' || e.type === 'error');
