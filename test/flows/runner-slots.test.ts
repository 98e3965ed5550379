import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { configureLogging } from '../../src/shared/log.ts';
import { startFakeProvider, modelRequests, type FakeProvider } from '../support/fake-provider.ts';
import { collect, runnerHarness, terminals, TENANT } from '../support/runner.ts';

configureLogging({ level: 'warn' });

/**
 * What the runner knows about its sidecars, over real HTTP (slot states, observed instances, session health), and the
 * `--role=all` wiring where runner and worker share a process and talk through `app.fetch`.
 */
let fake: FakeProvider;
const { startWorker, startRunner, startInProcess, stopAll } = runnerHarness(() => fake);

beforeAll(async () => {
  fake = await startFakeProvider();
});
afterEach(() => stopAll());
afterAll(() => fake.close());

describe('sidecar slots seen from the runner', () => {
  it('reports the worker it ran on as a live slot with the instance it observed', async () => {
    const w = await startWorker();
    const { client } = await startRunner({ workerUrl: w.url });
    await collect(await client.run(TENANT, { profile: 'helper', prompt: 'count me' }));

    const topology = await client.topology();
    const general = topology.sidecars.find((s) => s.runtime === 'general')!;
    expect(general).toMatchObject({ mode: 'sidecar', endpoint: w.url, state: 'live', activeSessions: 1 });
    expect(general.observedInstances).toHaveLength(1);
    expect(general.observedInstances[0]).toMatchObject({
      instanceId: expect.stringMatching(/^wrk_/),
      runsServed: 1,
      consecutiveFailures: 0,
      pid: process.pid,
      nodeVersion: process.version,
    });
    expect(general.observedInstances[0].lastProbedAt).not.toBe('');
    expect(topology.sessionsByRuntime).toEqual({ general: 1, runtime_a: 0, runtime_b: 0 });
  });

  it('reports slot states: stub without a URL, live when the worker answers, unreachable when it refuses', async () => {
    const w = await startWorker();
    const gone = await startWorker();
    await gone.kill();
    const { client } = await startRunner({ workerUrlByRuntime: { general: w.url, runtime_b: gone.url } });

    const { sidecars } = await client.topology();
    expect(sidecars.map((s) => [s.runtime, s.state])).toEqual([
      ['general', 'live'],
      ['runtime_a', 'stub'],
      ['runtime_b', 'unreachable'],
    ]);
    const runtimes = await client.runtimes();
    expect(runtimes.map((r) => [r.id, r.mode, r.url])).toEqual([
      ['general', 'sidecar', w.url],
      ['runtime_a', 'stub', ''],
      ['runtime_b', 'sidecar', gone.url],
    ]);
  });

  it('answers session health from the worker: healthy while it answers, unhealthy once it is gone', async () => {
    const w = await startWorker();
    const { client } = await startRunner({ workerUrl: w.url });
    const sessionId = await client.createSession(TENANT, 'helper');
    expect(await client.sessionHealth(TENANT, sessionId)).toEqual({ healthy: true });
    await w.kill();
    const health = await client.sessionHealth(TENANT, sessionId);
    expect(health.healthy).toBe(false);
    expect(health.error).toContain(`worker unreachable at ${w.url}`);
  });
});

describe('runner and worker in one process (no sockets between them)', () => {
  it('runs a prompt through the in-process worker', async () => {
    const client = await startInProcess();
    const events = await collect(await client.run(TENANT, { profile: 'helper', prompt: 'in process' }));
    expect(events[0].type).toBe('session_init');
    expect(terminals(events)).toEqual([expect.objectContaining({ type: 'result', message: 'FAKE-REPLY: in process' })]);
    const general = (await client.topology()).sidecars.find((s) => s.runtime === 'general')!;
    expect(general).toMatchObject({ state: 'live', mode: 'sidecar' });
  });

  it('cancels the model call when the caller aborts, without any socket between runner and worker', async () => {
    const client = await startInProcess();
    const sessionId = await client.createSession(TENANT, 'helper');
    const ac = new AbortController();
    const before = modelRequests(fake).length;
    for await (const e of await client.run(TENANT, { profile: 'helper', sessionId, prompt: 'HANG_AFTER_FIRST in process' }, ac.signal)) {
      if (e.type === 'assistant') ac.abort();
    }
    await fake.when(() => modelRequests(fake).slice(before).find((r) => r.clientClosedEarly));
    await vi.waitFor(async () => expect(await client.getSession(TENANT, sessionId)).toMatchObject({ status: 'idle', lastRunStatus: 'cancelled' }));
  });
});
