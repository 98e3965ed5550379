import { afterAll, beforeAll, describe, expect, it, onTestFailed, vi } from 'vitest';
import { MODEL, startCluster, type Cluster, type ClusterNode } from '../support/cluster.ts';

/**
 * The done-when of issue 19: two conductor processes on one PostgreSQL run an every-second automation; each slot fires
 * exactly once (no duplicates, at most one gap), and SIGKILLing one conductor midway changes nothing of that.
 */
const WAIT = { timeout: 30_000, interval: 200 };

describe('an every-second automation on two conductors', () => {
  let cluster: Cluster;
  let A: ClusterNode;
  let B: ClusterNode;

  beforeAll(async () => {
    cluster = await startCluster({ conductors: 2, runners: 1, leaseTtlMs: 1500 });
    [A, B] = cluster.conductors;
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  const json = async (node: ClusterNode, path: string, init: RequestInit & { json?: unknown } = {}) => {
    const res = await cluster.api(node, path, init);
    return { status: res.status, body: await res.json() };
  };
  const firings = async (node: ClusterNode, id: string) => (await json(node, `/api/automations/firings?automation=${id}&limit=1000`)).body as any[];

  it('fires each slot exactly once, before and after one conductor is killed', async () => {
    onTestFailed(() => console.log(cluster.logs()));
    expect((await json(A, '/api/profiles', { method: 'POST', json: { name: 'ticker', runtime: 'general', model: MODEL } })).status).toBe(201);
    const created = await json(A, '/api/automations', { method: 'POST', json: { name: 'tick', profile: 'ticker', prompt: 'tick', cron: '* * * * * *' } });
    expect(created.status).toBe(201);
    const id = created.body.id;

    await vi.waitFor(async () => expect((await firings(B, id)).length).toBeGreaterThanOrEqual(5), WAIT);
    await B.kill('SIGKILL');
    const before = (await firings(A, id)).length;
    await vi.waitFor(async () => expect((await firings(A, id)).length).toBeGreaterThanOrEqual(before + 5), WAIT);
    expect((await json(A, `/api/automations/${id}/stop`, { method: 'POST' })).body).toMatchObject({ status: 'stopped', nextRunAt: null });

    // every firing that started a run ends (the killed conductor's runs are interrupted by the orphan sweep)
    await vi.waitFor(async () => expect((await firings(A, id)).filter((f) => f.outcome === null && f.sessionId !== null)).toEqual([]), WAIT);
    const all = await firings(A, id);
    const slots = all.map((f) => Date.parse(f.scheduledFor)).sort((x, y) => x - y);
    expect(new Set(slots).size).toBe(slots.length);
    const gaps = slots.slice(1).filter((s, i) => s - slots[i] !== 1000);
    expect(gaps.length, `slots: ${all.map((f) => f.scheduledFor).sort().join(' ')}`).toBeLessThanOrEqual(1);
    expect(slots.length).toBeGreaterThanOrEqual(10);

    // one run per fired slot, each visible in /api/runs
    const runIds = all.filter((f) => f.outcome !== 'skipped').map((f) => f.runId);
    expect(new Set(runIds).size).toBe(runIds.length);
    const runs = (await json(A, '/api/runs')).body as any[];
    const started = all.filter((f) => f.sessionId !== null).map((f) => f.runId);
    for (const runId of started) expect(runs.map((r) => r.id)).toContain(runId);
  }, 90_000);
});
