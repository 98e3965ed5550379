import { afterAll, beforeAll, describe, expect, it, onTestFailed, vi } from 'vitest';
import { MODEL, startCluster, type Cluster, type ClusterNode } from '../support/cluster.ts';
import { lastUserPrompt, modelRequests } from '../support/fake-provider.ts';
import { followPlan } from '../support/workflows.ts';

/**
 * The done-when of issue 20 on real processes: a schedule fires once per slot with two conductors up; a workflow
 * started on one conductor, which is SIGKILLed while its node runs, completes through the other conductor: the node's
 * run is adopted there (runs outlive a crashed conductor), its end moves the plan on there, and the plan stream
 * followed on the survivor ends at `completed`. When the node's runner dies too, its run ends interrupted: the node is
 * marked error and handled per its onError (pause), and a repair on the surviving conductor runs it again.
 */
const WAIT = { timeout: 30_000, interval: 200 };

describe('workflows on two conductor processes', () => {
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
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const get = async (node: ClusterNode, id: string) => (await json(node, `/api/workflows/runs/${id}`)).body.workflowRun;

  it('a schedule starts one run of its definition per slot with two conductors up', async () => {
    onTestFailed(() => console.log(cluster.logs()));
    expect((await json(A, '/api/profiles', { method: 'POST', json: { name: 'ticker', runtime: 'general', model: MODEL } })).status).toBe(201);
    const def = (await json(A, '/api/workflows/definitions', { method: 'POST', json: { name: 'tick', nodes: [{ id: 't', profile: 'ticker', prompt: 'tick' }] } })).body.workflowDefinition;
    const created = await json(B, '/api/workflows/schedules', { method: 'POST', json: { workflowDefinitionId: def.id, cron: '* * * * * *' } });
    expect(created.status).toBe(201);
    const id = created.body.workflowSchedule.id;
    const runsOf = async () => (await json(A, `/api/workflows/runs?scheduleId=${id}`)).body as any[];
    await vi.waitFor(async () => expect((await runsOf()).length).toBeGreaterThanOrEqual(6), WAIT);
    expect((await json(A, `/api/workflows/schedules/${id}/pause`, { method: 'POST' })).body.workflowSchedule).toMatchObject({ status: 'paused' });
    await vi.waitFor(async () => expect((await runsOf()).filter((r) => r.statusLabel !== 'completed')).toEqual([]), WAIT);
    const runs = await runsOf();
    const slots = runs.map((r) => Date.parse(r.scheduledFor)).sort((x, y) => x - y);
    expect(new Set(slots).size).toBe(slots.length);
    const gaps = slots.slice(1).filter((s, i) => s - slots[i] !== 1000);
    expect(gaps.length, `slots: ${runs.map((r) => r.scheduledFor).sort().join(' ')}`).toBeLessThanOrEqual(1);
    // each slot's run has a node run of its own
    const nodeRuns = await Promise.all(runs.map(async (r) => (await json(A, `/api/workflows/runs/${r.id}`)).body.workflowRun.nodes[0].runId));
    expect(new Set(nodeRuns).size).toBe(runs.length);
  }, 90_000);

  const startOnB = async (hold: string) => {
    const created = await json(B, '/api/workflows/runs', {
      method: 'POST',
      json: { name: hold, nodes: [{ id: 'a', profile: 'wf', prompt: `HOLD ${hold} step a` }, { id: 'b', profile: 'wf', prompt: 'step b after <{{nodes.a.output}}>', dependsOn: ['a'] }] },
    });
    expect(created.status).toBe(202);
    const id = created.body.workflowRun.id;
    const live = followPlan((signal) => cluster.api(A, `/api/workflows/runs/${id}/stream`, { signal }));
    // a's run is driven by B (the conductor that started it) and waits at the model
    await cluster.fake.when(() => modelRequests(cluster.fake).some((r) => lastUserPrompt(r)?.includes(`HOLD ${hold}`)));
    return { id, live, firstRun: (await get(A, id)).nodes[0].runId as string };
  };
  const completedOnA = async (id: string, live: ReturnType<typeof followPlan>) => {
    await vi.waitFor(async () => expect((await get(A, id)).statusLabel).toBe('completed'), WAIT);
    const done = await get(A, id);
    expect(done.nodes.map((n: any) => n.statusLabel)).toEqual(['ok', 'ok']);
    expect(done.nodes[1].output).toBe(`FAKE-REPLY: step b after <${done.nodes[0].output}>`);
    for (const n of done.nodes) expect((await json(A, `/api/runs/${n.runId}`)).body.status).toBe('ok');
    const frames = await live.ended;
    expect(frames[0].event).toBe('snapshot');
    expect(frames.map((f) => f.id)).toEqual(frames.map((_, i) => frames[0].id + i));
    expect(frames.at(-1)!.data.workflowRun).toEqual(done);
    return done;
  };

  it('completes through the surviving conductor after the one driving its node is killed', async () => {
    onTestFailed(() => console.log(cluster.logs()));
    expect((await json(A, '/api/profiles', { method: 'POST', json: { name: 'wf', runtime: 'general', model: MODEL } })).status).toBe(201);
    const { id, live, firstRun } = await startOnB('crash');
    await B.kill('SIGKILL');
    cluster.fake.release('crash');
    // A adopts a's run (same run id), its end reaches the workflows subscriber on A, and A starts and finishes b
    const done = await completedOnA(id, live);
    expect(done.nodes[0]).toMatchObject({ runId: firstRun, output: 'FAKE-REPLY: HOLD crash step a' });
  }, 90_000);

  it('pauses on a node whose run died with its runner, and completes on the other conductor after retry_node', async () => {
    onTestFailed(() => console.log(cluster.logs()));
    await B.start(); // the killed conductor, restarted
    const { id, live, firstRun } = await startOnB('runnerdies');
    const [runner] = cluster.runners;
    await Promise.all([B.kill('SIGKILL'), runner.kill('SIGKILL')]);
    cluster.fake.release('runnerdies');
    // nobody can adopt the run: it ends interrupted, the node is in error and (onError pause) the run pauses
    await vi.waitFor(async () => expect((await get(A, id)).statusLabel).toBe('paused'), WAIT);
    expect((await get(A, id)).nodes[0]).toMatchObject({ statusLabel: 'error', runId: firstRun, error: expect.stringMatching(/^run interrupted/) });
    expect((await json(A, `/api/runs/${firstRun}`)).body.status).toBe('interrupted');
    await runner.start();
    // the restarted runner takes runs again once A has sent it the profiles: a probe run ends ok
    await vi.waitFor(async () => {
      const probe = await json(A, '/api/runs', { method: 'POST', json: { profile: 'wf', prompt: 'probe' } });
      expect(probe.status).toBe(202);
      await vi.waitFor(async () => expect((await json(A, `/api/runs/${probe.body.runId}`)).body.status).not.toBe('running'), WAIT);
      expect((await json(A, `/api/runs/${probe.body.runId}`)).body.status).toBe('ok');
    }, WAIT);
    expect((await json(A, `/api/workflows/runs/${id}/repair`, { method: 'POST', json: { action: 'retry_node', nodeId: 'a' } })).status).toBe(202);
    const done = await completedOnA(id, live);
    expect(done.nodes[0].runId).not.toBe(firstRun);
  }, 90_000);
});
