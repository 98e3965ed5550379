import { afterAll, beforeAll, describe, expect, it, onTestFailed, vi } from 'vitest';
import { MODEL, startCluster, type Cluster, type ClusterNode } from '../support/cluster.ts';
import { lastUserPrompt, modelRequests } from '../support/fake-provider.ts';
import { followPlan } from '../support/workflows.ts';

/**
 * The done-when of issue 20 on real processes: a workflow started on one conductor, which is SIGKILLed while its node
 * runs, completes through the other conductor. The killed node's run is interrupted by the orphan sweep, the node is
 * marked error and handled per its onError (pause), a repair on the surviving conductor runs it again, and the rest
 * of the plan moves on there; the plan stream followed on the survivor sees it all and ends at `completed`.
 */
const WAIT = { timeout: 30_000, interval: 200 };

describe('a workflow across a conductor crash', () => {
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
