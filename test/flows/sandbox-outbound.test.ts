import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRunnerClient } from '../../src/contracts/runner.client.ts';
import type { RunEvent } from '../../src/contracts/run-event.ts';
import { createRunner, type Runner } from '../../src/modules/runner/index.ts';
import { startOutboundWorker, OutboundConfigError, type OutboundWorker } from '../../src/modules/worker/index.ts';
import type { LaunchedWorker, WorkerSubstrate } from '../../src/modules/runner/substrates/substrate.ts';
import { configureLogging } from '../../src/shared/log.ts';
import { startFakeProvider, modelRequests, lastUserPrompt, type FakeProvider } from '../support/fake-provider.ts';
import { listen, type Listening } from '../support/listen.ts';
import { collect, INTERNAL_TOKEN, MODEL, runnerDefaults, TENANT } from '../support/runner.ts';
import { workerConfig } from '../support/worker.ts';

configureLogging({ level: 'warn' });

/**
 * The worker's outbound client mode against a real runner over real HTTP. The runner's substrate here starts the
 * worker in this process (the outbound module, with exactly the environment the runner hands a worker), so the test
 * can stop and restart it around one state folder.
 */
let fake: FakeProvider;
let http: Listening | undefined;
let runner: Runner | undefined;
let stateDir: string;
const SECRET = 'outbound-test-secret-0123456789abcdefghijk';

beforeAll(async () => {
  fake = await startFakeProvider();
});
afterEach(async () => {
  await runner?.close();
  await http?.close();
  rmSync(stateDir, { recursive: true, force: true });
});
afterAll(() => fake.close());

function inProcessSubstrate(url: () => string) {
  const started: Array<Promise<OutboundWorker>> = [];
  const gone = new Set<LaunchedWorker>();
  const byWorker = new Map<LaunchedWorker, Promise<OutboundWorker>>();
  const launch = (spec: Parameters<WorkerSubstrate['launch']>[0]): LaunchedWorker => {
    const env = spec.env;
    const worker = startOutboundWorker({
      config: workerConfig({
        runnerUrl: env.SVC_RUNNER_URL,
        workerToken: env.SVC_WORKER_TOKEN,
        sessionId: env.SVC_SESSION_ID,
        protocol: Number(env.SVC_WORKER_PROTOCOL),
        stateDir,
        providerEnv: { OPENAI_COMPATIBLE_BASE_URL: fake.url, OPENAI_COMPATIBLE_API_KEY: 'x' },
      }),
    });
    started.push(worker);
    const launched: LaunchedWorker = {
      workerId: `inproc-${started.length}`,
      pid: undefined,
      startedAt: new Date().toISOString(),
      exited: worker.then((w) => w.done).then(() => ({ code: 0, signal: null })),
      stderrTail: () => '',
    };
    void launched.exited.then(() => gone.add(launched));
    byWorker.set(launched, worker);
    return launched;
  };
  const substrate: WorkerSubstrate = {
    id: 'container',
    ready: async () => ({ offered: true, detail: 'in-process outbound workers' }),
    status: () => ({ offered: true, detail: 'in-process outbound workers' }),
    runnerUrlFor: async () => url(),
    launch,
    resume: launch,
    pause: async (w) => void (await (await byWorker.get(w)!).done),
    stop: async (w) => (await byWorker.get(w)!).stop(),
    state: (w) => (gone.has(w) ? 'gone' : 'running'),
  };
  return { substrate, started };
}

async function setup() {
  stateDir = mkdtempSync(join(tmpdir(), 'svc-outbound-state-'));
  const inproc = inProcessSubstrate(() => http!.url);
  http = await listen((req) => runner!.app.fetch(req));
  runner = createRunner({
    config: { ...runnerDefaults(), publicUrl: http.url, workerTokenSecret: SECRET, workerSubstrate: 'container' },
    internalToken: INTERNAL_TOKEN,
    publicUrl: http.url,
    version: 'test',
    probeIntervalMs: 0,
    substrates: [inproc.substrate],
  });
  const client = createRunnerClient({ baseUrl: http.url, internalToken: INTERNAL_TOKEN });
  await client.putProfile(TENANT, { name: 'sbx', runtime: 'general', model: MODEL, workerMode: 'sandbox' });
  const sessionId = await client.createSession(TENANT, 'sbx');
  return { client, sessionId, inproc };
}

const userPrompts = () =>
  (modelRequests(fake).at(-1)!.body.messages as Array<{ role: string; content: unknown }>).filter((m) => m.role === 'user').map((m) => m.content);

describe('outbound worker mode', () => {
  it('writes its state to SVC_STATE_DIR after a run and restores it before its first poll after a restart', async () => {
    const { client, sessionId, inproc } = await setup();
    const first = await collect(await client.run(TENANT, { id: 'run-1', profile: 'sbx', sessionId, prompt: 'the secret is kumquat' }));
    expect(first.at(-1)).toMatchObject({ type: 'result' });
    expect(JSON.parse(readFileSync(join(stateDir, 'bundle.json'), 'utf8'))).toMatchObject({ runtime: 'general', contentType: 'application/json', runtimeSessionId: sessionId });
    expect(readFileSync(join(stateDir, 'bundle'), 'utf8')).toContain('the secret is kumquat');
    // the durable copy reached the runner too
    expect(Buffer.from((await client.exportState(TENANT, sessionId))!.bytes).toString('utf8')).toContain('kumquat');

    // the worker stops (its lease invalidated) and a new one starts on the same state folder with the next run
    const lease = (await client.workerLease(TENANT, sessionId)) as { workerId: string };
    await (await fetch(`${http!.url}/runner/sandbox-events/invalidate`, { method: 'POST', headers: { 'X-Svc-Internal-Token': `Bearer ${INTERNAL_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ provider: 'container', sandboxId: lease.workerId }) })).body?.cancel();
    await (await inproc.started[0]).done;
    const second = await collect(await client.run(TENANT, { id: 'run-2', profile: 'sbx', sessionId, prompt: 'what is the secret?' }));
    expect(second.at(-1)).toMatchObject({ type: 'result', message: 'FAKE-REPLY: what is the secret?' });
    expect(inproc.started).toHaveLength(2);
    expect(userPrompts()).toEqual(['the secret is kumquat', 'what is the secret?']);
  }, 30_000);

  it('cancels the model call when the runner closes the event upload', async () => {
    const { client, sessionId } = await setup();
    const ac = new AbortController();
    const events = (await client.run(TENANT, { id: 'run-1', profile: 'sbx', sessionId, prompt: 'HANG_AFTER_FIRST outbound' }, ac.signal))[Symbol.asyncIterator]();
    for (let next = await events.next(); !next.done; next = await events.next()) {
      if ((next.value as RunEvent).type === 'assistant') break;
    }
    ac.abort();
    await fake.when(() => modelRequests(fake).find((r) => r.clientClosedEarly && lastUserPrompt(r) === 'HANG_AFTER_FIRST outbound'));
  }, 30_000);

  it('refuses an unsupported protocol at start, in the module and as a process', async () => {
    stateDir = mkdtempSync(join(tmpdir(), 'svc-outbound-state-'));
    await expect(startOutboundWorker({ config: workerConfig({ runnerUrl: 'http://127.0.0.1:1', workerToken: 't', sessionId: 's', protocol: 2 }) })).rejects.toThrow(OutboundConfigError);
    const bin = join(import.meta.dirname, '../../bin/svc.js');
    const env = { PATH: process.env.PATH, SVC_RUNNER_URL: 'http://127.0.0.1:1', SVC_WORKER_TOKEN: 't', SVC_SESSION_ID: 's', SVC_WORKER_PROTOCOL: '2', SVC_STATE_DIR: stateDir };
    const out = spawnSync(process.execPath, [bin, 'serve', '--role=worker'], { env, encoding: 'utf8', timeout: 20_000 });
    expect(out.status).toBe(2);
    expect(out.stderr).toMatch(/SVC_WORKER_PROTOCOL/);
    expect(existsSync(join(stateDir, 'bundle'))).toBe(false);
  }, 30_000);
});
