import { availableParallelism } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { call, makeRunner, newSession, putProfile, refusedUrl } from '../runner.fixture.ts';
import type { Runner } from '../runner.ts';
import { IN_PROCESS_WORKER_URL } from './worker-slots.ts';

let runner: Runner;
afterEach(() => runner?.close());

describe('GET /runner/runtimes', () => {
  it('lists the three runtimes as stubs with empty URLs when no worker is configured', async () => {
    runner = makeRunner();
    const { runtimes } = await (await call(runner, 'GET', '/runner/runtimes')).json();
    expect(runtimes.map((r: { id: string }) => r.id)).toEqual(['general', 'runtime_a', 'runtime_b']);
    for (const r of runtimes) expect(r).toMatchObject({ mode: 'stub', url: '', activeSessions: 0 });
  });

  it('prefers the per-runtime worker URL and counts live sessions across tenants', async () => {
    runner = makeRunner({ config: { workerUrl: 'http://all.test:1', workerUrlByRuntime: { runtime_a: 'http://a.test:2' } } });
    await putProfile(runner, { name: 'p', runtime: 'runtime_a' }, 't1');
    await putProfile(runner, { name: 'p', runtime: 'runtime_a' }, 't2');
    await newSession(runner, 'p', 't1');
    const gone = await newSession(runner, 'p', 't2');
    await newSession(runner, 'p', 't2');
    await call(runner, 'DELETE', `/runner/sessions/${gone}`, { tenant: 't2' });
    const { runtimes } = await (await call(runner, 'GET', '/runner/runtimes')).json();
    expect(runtimes).toEqual([
      { id: 'general', name: expect.any(String), mode: 'sidecar', url: 'http://all.test:1', activeSessions: 0 },
      { id: 'runtime_a', name: expect.any(String), mode: 'sidecar', url: 'http://a.test:2', activeSessions: 2 },
      { id: 'runtime_b', name: expect.any(String), mode: 'sidecar', url: 'http://all.test:1', activeSessions: 0 },
    ]);
  });

  it('routes runtimes without a URL to the in-process worker when given a fetch', async () => {
    runner = makeRunner({ workerFetch: () => new Response('no', { status: 503 }) });
    const { runtimes } = await (await call(runner, 'GET', '/runner/runtimes')).json();
    for (const r of runtimes) expect(r).toMatchObject({ mode: 'sidecar', url: IN_PROCESS_WORKER_URL });
  });
});

describe('runtime slot mode', () => {
  it('turns unknown once the worker behind a runtime says it serves a different one', async () => {
    const health = { ok: true, runtime: 'runtime_b', instanceId: 'w1' };
    runner = makeRunner({ config: { workerUrlByRuntime: { general: 'http://wrong.test' } }, workerFetch: () => Response.json(health) });
    await call(runner, 'GET', '/runner/topology');
    const { runtimes } = await (await call(runner, 'GET', '/runner/runtimes')).json();
    expect(runtimes[0]).toMatchObject({ id: 'general', mode: 'unknown', url: 'http://wrong.test' });
  });
});

describe('GET /runner/topology', () => {
  it('reports real process figures and a stub slot per unconfigured runtime', async () => {
    runner = makeRunner();
    const topology = await (await call(runner, 'GET', '/runner/topology')).json();
    expect(topology.process.numCPU).toBe(availableParallelism());
    expect(topology.process.sysBytes).toBeGreaterThan(topology.process.allocBytes);
    expect(topology.process.heapInuseBytes).toBeGreaterThan(0);
    expect(topology.process.numGoroutine).toBeGreaterThan(0);
    expect(topology.process.cpu.userMicros).toBeGreaterThan(0);
    expect(topology.sessionsByRuntime).toEqual({ general: 0, runtime_a: 0, runtime_b: 0 });
    expect(topology.sidecars).toHaveLength(3);
    for (const s of topology.sidecars) expect(s).toMatchObject({ mode: 'stub', endpoint: '', state: 'stub', observedInstances: [] });
  });

  it('probes on read, so a configured worker that refuses connections shows unreachable at once', async () => {
    const url = await refusedUrl();
    runner = makeRunner({ config: { workerUrlByRuntime: { runtime_b: url } } });
    const { sidecars } = await (await call(runner, 'GET', '/runner/topology')).json();
    expect(sidecars.map((s: { runtime: string; state: string }) => [s.runtime, s.state])).toEqual([
      ['general', 'stub'],
      ['runtime_a', 'stub'],
      ['runtime_b', 'unreachable'],
    ]);
  });
});
