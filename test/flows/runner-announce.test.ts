import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { INTERNAL_TOKEN_HEADER, RUNNER_ANNOUNCE_PATH } from '../../src/contracts/runner.ts';
import { INTERNAL_TOKEN, MODEL, startCluster, type Cluster, type ClusterNode } from '../support/cluster.ts';
import { waitForOutput } from '../support/process.ts';
import { isTerminalEvent, readSse } from '../support/sse.ts';

/**
 * A runner that restarts announces itself: with the conductor's reconcile interval far away (two minutes), a
 * conductor that saw the runner go down accepts the run after its restart at once (not 503 until the next probe),
 * because the runner told the conductor it was back and the conductor probed and restored it before answering.
 */
describe('a runner announcing itself to its conductor', () => {
  let cluster: Cluster;
  let C: ClusterNode;
  let R: ClusterNode;
  let other: ClusterNode;

  beforeAll(async () => {
    cluster = await startCluster({ conductors: 1, runners: 2, reconcileMs: 120_000, announce: true });
    [C] = cluster.conductors;
    [R, other] = cluster.runners;
    const res = await cluster.api(C, '/api/profiles', { method: 'POST', json: { name: 'helper', runtime: 'general', model: MODEL } });
    expect(res.status, await res.clone().text()).toBe(201);
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  const runToEnd = async (prompt: string) => {
    const res = await cluster.api(C, '/api/runs', { method: 'POST', json: { profile: 'helper', prompt } });
    expect(res.status, await res.clone().text()).toBe(202);
    const { runId } = (await res.json()) as { runId: string };
    const frames = await readSse(await cluster.api(C, `/api/runs/${runId}/stream`));
    return frames.filter((f) => isTerminalEvent(f.event));
  };

  it('gets a run accepted and completed right after the runner restarts, long before the next reconcile', async () => {
    onTestFailed(() => console.error(cluster.logs()));
    expect(await runToEnd('before the restart')).toEqual([expect.objectContaining({ event: expect.objectContaining({ type: 'result' }) })]);

    await Promise.all([R.kill('SIGKILL'), other.kill('SIGKILL')]);
    // the conductor sees both gone (a topology read probes the fleet): until it hears otherwise, runs get 503
    expect((await cluster.api(C, '/api/topology')).status).toBe(200);
    const refused = await cluster.api(C, '/api/runs', { method: 'POST', json: { profile: 'helper', prompt: 'while it is down' } });
    expect(refused.status).toBe(503);
    await R.start(); // a new runner process: no profiles, no sessions; the other stays down
    await waitForOutput(R.proc!, /announced to the conductor/, 15_000);

    const [terminal] = await runToEnd('after the restart');
    expect(terminal?.event).toMatchObject({ type: 'result', message: expect.stringContaining('FAKE-REPLY: after the restart') });
  }, 60_000);

  it('refuses an announcement without the internal token (401) and one from a runner it does not drive (404)', async () => {
    const post = (headers: Record<string, string>, body: unknown) =>
      fetch(`${C.url}${RUNNER_ANNOUNCE_PATH}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    const anonymous = await post({}, { url: R.url });
    expect(anonymous.status).toBe(401);
    expect((await anonymous.json()).error).toMatch(/internal token/);
    const stranger = await post({ [INTERNAL_TOKEN_HEADER]: `Bearer ${INTERNAL_TOKEN}` }, { url: 'http://127.0.0.1:1' });
    expect(stranger.status).toBe(404);
    expect((await stranger.json()).error).toMatch(/^unknown runner: http:\/\/127\.0\.0\.1:1 /);
    const malformed = await post({ [INTERNAL_TOKEN_HEADER]: `Bearer ${INTERNAL_TOKEN}` }, { url: 42 });
    expect(malformed.status).toBe(400);
    expect((await malformed.json()).error).toMatch(/^url: /);
  });
});
