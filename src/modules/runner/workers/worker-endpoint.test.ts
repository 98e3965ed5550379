import { describe, expect, it } from 'vitest';
import { createWorkerEndpoint, UNREACHABLE_AFTER } from './worker-endpoint.ts';

const refused = new Error('connect ECONNREFUSED');
const endpoint = () => createWorkerEndpoint('http://worker.test', () => Promise.reject(refused));

describe('sidecar slot state', () => {
  it('starts cold: configured but never heard from', () => {
    expect(endpoint().state()).toBe('cold');
  });

  it('is unreachable when it fails before ever answering', () => {
    const e = endpoint();
    e.recordFailure(refused);
    expect(e.state()).toBe('unreachable');
    expect(e.lastError()).toBe('connect ECONNREFUSED');
  });

  it('goes live on traffic, degraded on a failure after that, unreachable after repeated failures, live again on success', () => {
    const e = endpoint();
    e.recordRun('inst-1', 0);
    expect(e.state()).toBe('live');
    e.recordFailure(refused);
    expect(e.state()).toBe('degraded');
    for (let i = 1; i < UNREACHABLE_AFTER; i++) e.recordFailure(refused);
    expect(e.state()).toBe('unreachable');
    e.recordRun('inst-1', 1);
    expect(e.state()).toBe('live');
    expect(e.lastError()).toBeUndefined();
  });

  it('counts a failing probe as a failure', async () => {
    const e = endpoint();
    expect(await e.probe(100)).toBe(false);
    expect(e.state()).toBe('unreachable');
  });
});

describe('observed instances', () => {
  it('counts runs per instance and keeps the inflight figure from the latest response', () => {
    const e = endpoint();
    e.recordRun('a', 2);
    e.recordRun('a', 1);
    e.recordRun('b', undefined);
    const [a, b] = e.instances();
    expect(a).toMatchObject({ instanceId: 'a', runsServed: 2, inflight: 1, consecutiveFailures: 0 });
    expect(b).toMatchObject({ instanceId: 'b', runsServed: 1 });
  });

  it('charges failures to the instance heard from last, and clears them when it answers', () => {
    const e = endpoint();
    e.recordRun('a', 0);
    e.recordFailure(refused);
    e.recordFailure(refused);
    expect(e.instances()[0].consecutiveFailures).toBe(2);
    e.recordRun('a', 0);
    expect(e.instances()[0].consecutiveFailures).toBe(0);
  });

  it('fills process figures from a /health probe', async () => {
    const health = {
      ok: true, runtime: 'all', instanceId: 'body-id', pid: 42, startedAt: 'x', uptimeSeconds: 7, inflight: 3, nodeVersion: 'v24.0.0',
      memory: { rssBytes: 1, heapUsedBytes: 2, heapTotalBytes: 3, externalBytes: 4 }, cpu: { userMicros: 5, systemMicros: 6 },
    };
    const e = createWorkerEndpoint('http://worker.test', () => Response.json(health, { headers: { 'X-Svc-Worker-Instance': 'hdr-id' } }));
    expect(await e.probe(1000)).toBe(true);
    expect(e.state()).toBe('live');
    expect(e.reportedMode()).toBe('all');
    const [inst] = e.instances();
    expect(inst).toMatchObject({ instanceId: 'hdr-id', pid: 42, uptimeSeconds: 7, inflight: 3, nodeVersion: 'v24.0.0', runsServed: 0, memory: health.memory, cpu: health.cpu });
    expect(inst.lastProbedAt).toBe(inst.lastSeenAt);
  });
});
