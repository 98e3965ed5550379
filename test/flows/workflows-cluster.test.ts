import { afterAll, beforeAll, describe, expect, it, onTestFailed, vi } from 'vitest';
import { MODEL, startCluster, type Cluster, type ClusterNode } from '../support/cluster.ts';
import { lastUserPrompt, modelRequests } from '../support/fake-provider.ts';
import { followPlan } from '../support/workflows.ts';

/**
 * The done-when of issue 20 on real processes: a schedule fires once per slot with two conductors up; a workflow started on one conductor, which is SIGKILLed while its node
 * runs, completes through the other conductor. The killed node's run is interrupted by the orphan sweep, the node is
 * marked error and handled per its onError (pause), a repair on the surviving conductor runs it again, and the rest
 * of the plan moves on there; the plan stream followed on the survivor sees it all and ends at `completed`.
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

  it('completes through the surviving conductor after the one driving its node is killed', async () => {
    onTestFailed(() => console.log(cluster.logs()));
    expect((await json(A, '/api/profiles', { method: 'POST', json: { name: 'wf', runtime: 'general', model: MODEL } })).status).toBe(201);
    const created = await json(B, '/api/workflows/runs', {
      method: 'POST',
      json: { name: 'crash', nodes: [{ id: 'a', profile: 'wf', prompt: 'HOLD crash step a' }, { id: 'b', profile: 'wf', prompt: 'step b after <{{nodes.a.output}}>', dependsOn: ['a'] }] },
    });
    expect(created.status).toBe(202);
    const id = created.body.workflowRun.id;
    const live = followPlan((signal) => cluster.api(A, `/api/workflows/runs/${id}/stream`, { signal }));

    // a's run is driven by B (the conductor that started it) and waits at the model; B dies
    await cluster.fake.when(() => modelRequests(cluster.fake).some((r) => lastUserPrompt(r)?.includes('HOLD crash')));
    const firstRun = (await get(A, id)).nodes[0].runId;
    await B.kill('SIGKILL');
    cluster.fake.release('crash');

    // the orphan sweep on A interrupts a's run; the workflows subscriber (on A) marks a error and pauses the run
    await vi.waitFor(async () => expect((await get(A, id)).statusLabel).toBe('paused'), WAIT);
    const paused = await get(A, id);
    expect(paused.nodes[0]).toMatchObject({ statusLabel: 'error', runId: firstRun, error: expect.stringMatching(/^run interrupted/) });
    expect((await json(A, `/api/runs/${firstRun}`)).body.status).toBe('interrupted');

    expect((await json(A, `/api/workflows/runs/${id}/repair`, { method: 'POST', json: { action: 'retry_node', nodeId: 'a' } })).status).toBe(202);
    await vi.waitFor(async () => expect((await get(A, id)).statusLabel).toBe('completed'), WAIT);
    const done = await get(A, id);
    expect(done.nodes.map((n: any) => n.statusLabel)).toEqual(['ok', 'ok']);
    expect(done.nodes[1].output).toBe(`FAKE-REPLY: step b after <${done.nodes[0].output}>`);
    for (const n of done.nodes) expect((await json(A, `/api/runs/${n.runId}`)).body.status).toBe('ok');

    const frames = await live.ended;
    expect(frames[0].event).toBe('snapshot');
    expect(frames.map((f) => f.id)).toEqual(frames.map((_, i) => frames[0].id + i));
    expect(frames.at(-1)!.data.workflowRun).toEqual(done);
  }, 90_000);
});
