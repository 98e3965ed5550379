import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { MODEL, startCluster, type Cluster, type ClusterNode } from '../support/cluster.ts';
import { isTerminalEvent, readSse, sseFrames, type SseFrame } from '../support/sse.ts';

/**
 * Nothing live that is not durable, and runs that outlive their conductor, on real processes: clients stream ten runs
 * live from conductor A, which is killed (SIGKILL) the moment one of them has seen a few events. Conductor B adopts
 * every run (its runner and worker are alive) and each completes `ok`. Every event id any client saw must be in the
 * log with the same event, and a client resuming with Last-Event-ID through conductor B gets exactly the log's events
 * after it, ending with one terminal event that the log holds too.
 */
const RUNS = 10;

describe('a conductor killed while runs stream through it', () => {
  let cluster: Cluster;
  let A: ClusterNode;
  let B: ClusterNode;

  beforeAll(async () => {
    cluster = await startCluster({ conductors: 2, runners: 1, leaseTtlMs: 1500, reconcileMs: 300 });
    [A, B] = cluster.conductors;
    const res = await cluster.api(A, '/api/profiles', { method: 'POST', json: { name: 'helper', runtime: 'general', model: MODEL } });
    expect(res.status, await res.clone().text()).toBe(201);
  }, 60_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  const streamPath = (runId: string) => `/api/runs/${encodeURIComponent(runId)}/stream`;

  it('every event id a live client saw is in the log, and a resuming client gets exactly the stored events', async () => {
    onTestFailed(() => console.error(cluster.logs()));
    const runIds: string[] = [];
    for (let i = 0; i < RUNS; i++) {
      const res = await cluster.api(A, '/api/runs', { method: 'POST', json: { profile: 'helper', prompt: `SLOW_DELTAS 400 5 run ${i}` } });
      expect(res.status, await res.clone().text()).toBe(202);
      runIds.push(((await res.json()) as { runId: string }).runId);
    }
    const seen = new Map<string, SseFrame[]>(runIds.map((id) => [id, []]));
    let killing: Promise<void> | undefined;
    const readers = runIds.map(async (runId) => {
      const frames = seen.get(runId)!;
      try {
        for await (const frame of sseFrames(await cluster.api(A, streamPath(runId)))) {
          frames.push(frame);
          // The kill lands right after a live event went out: the moment an event not yet stored would be exposed.
          if (frames.length === 20 && !killing) killing = A.kill('SIGKILL');
        }
      } catch {
        // the conductor died under the stream
      }
    });
    await Promise.all(readers);
    await killing;
    expect(killing, 'the conductor was killed mid-run').toBeDefined();

    for (const runId of runIds) {
      // B adopts the run and drives it to its end on the runner; then the log is complete.
      const log = await readSse(await cluster.api(B, streamPath(runId)));
      const byId = new Map(log.map((f) => [f.id, f.event]));
      expect(log.map((f) => f.id)).toEqual(log.map((_, i) => i + 1));
      expect(log.filter((f) => isTerminalEvent(f.event))).toHaveLength(1);
      expect(log.at(-1)?.event, `run ${runId} completed through B`).toMatchObject({ type: 'result' });
      const run = (await (await cluster.api(B, `/api/runs/${encodeURIComponent(runId)}`)).json()) as { status: string };
      expect(run.status, `run ${runId}`).toBe('ok');
      // every delta the model sent reached the log once, in order
      const deltas = log.filter((f) => f.event.type === 'assistant' && f.event.delta).map((f) => String(f.event.message ?? ''));
      expect(deltas.join('')).toBe(Array.from({ length: 400 }, (_, i) => `d${i} `).join(''));
      const frames = seen.get(runId)!;
      for (const f of frames) expect(byId.get(f.id), `run ${runId}: event ${f.id} a client saw is not in the log`).toEqual(f.event);

      const lastSeen = frames.at(-1)?.id ?? 0;
      const resumed = await readSse(await cluster.api(B, streamPath(runId), { headers: { 'Last-Event-ID': String(lastSeen) } }));
      expect(resumed, `run ${runId} resumed after ${lastSeen}`).toEqual(log.filter((f) => f.id > lastSeen));
      expect(resumed.filter((f) => isTerminalEvent(f.event))).toHaveLength(1);
    }
  }, 90_000);
});
