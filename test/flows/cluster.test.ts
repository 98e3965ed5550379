import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it, onTestFailed, vi } from 'vitest';
import { openDatabase } from '../../src/db/index.ts';
import { bootstrapIdentity, KEY_CACHE_MS } from '../../src/modules/conductor/identity/index.ts';
import { runnerHash } from '../../src/shared/ids.ts';
import { createLogger } from '../../src/shared/log.ts';
import { MODEL, PEPPER, startCluster, type Cluster, type ClusterNode } from '../support/cluster.ts';
import { lastUserPrompt, modelRequests } from '../support/fake-provider.ts';
import { followSse, isTerminalEvent, readSse, type LiveSse, type SseFrame } from '../support/sse.ts';

/**
 * The role-split deployment as real processes on real ports: two conductors sharing one PostgreSQL server, two
 * runners, one worker on the fake model provider. Runs spread over both runners; a runner crash ends its runs with
 * exactly one terminal event and its restart gets profiles and sessions back; any conductor streams any run; a
 * conductor crash hands its runs to the other replica, which completes them (only a run whose runner died too ends
 * `interrupted`), while the other replica's runs go on.
 */
interface RunRef {
  runId: string;
  sessionId: string;
}

interface RunView {
  id: string;
  status: string;
  subTask: { sessionId: string; prompt: string };
  events: Array<{ type: string; message?: string }>;
}

const hashOf = (sessionId: string) => /^sess-([0-9a-f]{8})-/.exec(sessionId)?.[1];
const WAIT = { timeout: 10_000, interval: 50 };

/** Bounds a promise: a wait that never ends fails the test with `what` instead of hanging it. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms)))]).finally(() =>
    clearTimeout(timer),
  );
}

/** Exactly one terminal event, and it is the last frame; ids run 1, 2, 3… from `firstId`. */
function expectWellFormed(frames: SseFrame[], firstId = 1): SseFrame {
  expect(frames.length).toBeGreaterThan(0);
  expect(frames.map((f) => f.id)).toEqual(frames.map((_, i) => firstId + i));
  const terminals = frames.filter((f) => isTerminalEvent(f.event));
  expect(terminals).toHaveLength(1);
  expect(frames.at(-1)).toBe(terminals[0]);
  return terminals[0];
}

describe('role-split cluster on PostgreSQL (2 conductors, 2 runners, 1 worker)', () => {
  let cluster: Cluster;
  let A: ClusterNode;
  let B: ClusterNode;
  let R0: ClusterNode;
  let R1: ClusterNode;

  beforeAll(async () => {
    cluster = await startCluster({ conductors: 2, runners: 2, leaseTtlMs: 1500, reconcileMs: 300 });
    [A, B] = cluster.conductors;
    [R0, R1] = cluster.runners;
    const res = await cluster.api(A, '/api/profiles', { method: 'POST', json: { name: 'helper', runtime: 'general', model: MODEL } });
    expect(res.status, await res.clone().text()).toBe(201);
  }, 60_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  const dumpLogsOnFailure = () => onTestFailed(() => console.error(cluster.logs()));

  async function startRun(conductor: ClusterNode, body: Record<string, unknown>): Promise<RunRef> {
    const res = await cluster.api(conductor, '/api/runs', { method: 'POST', json: { profile: 'helper', ...body } });
    expect(res.status, `POST /api/runs on ${conductor.name}: ${await res.clone().text()}`).toBe(202);
    return (await res.json()) as RunRef;
  }

  const streamPath = (runId: string) => `/api/runs/${encodeURIComponent(runId)}/stream`;
  const readStream = async (conductor: ClusterNode, runId: string, lastEventId?: number) =>
    readSse(await cluster.api(conductor, streamPath(runId), { headers: lastEventId === undefined ? {} : { 'Last-Event-ID': String(lastEventId) } }));
  const follow = (conductor: ClusterNode, runId: string, lastEventId?: number): LiveSse =>
    followSse((signal) => cluster.api(conductor, streamPath(runId), { signal, headers: lastEventId === undefined ? {} : { 'Last-Event-ID': String(lastEventId) } }));
  const getRun = async (conductor: ClusterNode, runId: string): Promise<RunView> => {
    const res = await cluster.api(conductor, `/api/runs/${encodeURIComponent(runId)}`);
    expect(res.status).toBe(200);
    return (await res.json()) as RunView;
  };
  const hasAssistant = (s: LiveSse) => s.frames.some((f) => f.event.type === 'assistant');

  it('refuses a key revoked through one conductor on the other once its key cache lapses (KEY_CACHE_MS), and on the revoking one at once', async () => {
    const key = await (await cluster.api(A, '/api/api-keys', { method: 'POST', json: { name: 'revoked-across-replicas' } })).json();
    const whoami = (conductor: ClusterNode) => fetch(`${conductor.url}/api/whoami`, { headers: { authorization: `Bearer ${key.token}` } });
    expect((await whoami(B)).status).toBe(200); // B holds the key in its cache now
    expect((await cluster.api(A, `/api/api-keys/${key.id}`, { method: 'DELETE' })).status).toBe(204);
    expect(await (await whoami(A)).json()).toEqual({ error: 'API key revoked' });
    await vi.waitFor(async () => expect(await (await whoami(B)).json()).toEqual({ error: 'API key revoked' }), { timeout: KEY_CACHE_MS + 5_000, interval: 100 });
  });

  it('spreads runs over both runners, survives a runner crash, restores it and streams through any conductor', async () => {
    dumpLogsOnFailure();
    const hashes = { [runnerHash(R0.url)]: R0, [runnerHash(R1.url)]: R1 };

    // 1. Twenty concurrent runs, half through each conductor: new sessions land on both runners, all end `ok`.
    const conductorOf = (i: number) => (i % 2 === 0 ? A : B);
    const runs = await Promise.all(Array.from({ length: 20 }, (_, i) => startRun(conductorOf(i), { prompt: `hello number ${i}` })));
    for (const r of runs) expect(Object.keys(hashes)).toContain(hashOf(r.sessionId));
    for (const conductor of [A, B]) {
      const placed = new Set(runs.filter((_, i) => conductorOf(i) === conductor).map((r) => hashOf(r.sessionId)));
      expect(placed, `sessions created through ${conductor.name}`).toEqual(new Set(Object.keys(hashes)));
    }
    const streams = await within(Promise.all(runs.map((r, i) => readStream(conductorOf(i), r.runId))), 20_000, 'the 20 run streams');
    streams.forEach((frames, i) => {
      const terminal = expectWellFormed(frames);
      expect(terminal.event).toMatchObject({ type: 'result', message: expect.stringContaining(`FAKE-REPLY: hello number ${i}`) });
    });
    // the other replica reads the same durable outcome
    for (const [i, r] of runs.entries()) expect((await getRun(conductorOf(i + 1), r.runId)).status).toBe('ok');

    // 2. Kill runner R1 (SIGKILL) while runs stream on it: they end `error`, each stream with exactly one terminal.
    const onR1 = runs.filter((r) => hashes[hashOf(r.sessionId)!] === R1);
    const onR0 = runs.filter((r) => hashes[hashOf(r.sessionId)!] === R0);
    expect(onR1.length).toBeGreaterThanOrEqual(4);
    const victims = await Promise.all(onR1.slice(0, 3).map((r, i) => startRun(conductorOf(i), { sessionId: r.sessionId, prompt: 'SLOW_DELTAS 200 50' })));
    const bystander = await startRun(B, { sessionId: onR0[0].sessionId, prompt: 'SLOW_DELTAS 30 60' });
    const victimStreams = victims.map((r, i) => follow(conductorOf(i), r.runId));
    const bystanderStream = follow(A, bystander.runId);
    await vi.waitFor(() => expect(victimStreams.every(hasAssistant) && hasAssistant(bystanderStream)).toBe(true), WAIT);
    await R1.kill('SIGKILL');

    const ended = await within(Promise.all(victimStreams.map((s) => s.ended)), 10_000, 'the streams of the killed runner’s runs');
    for (const frames of ended) expect(expectWellFormed(frames).event.type).toBe('error');
    for (const r of victims) expect((await getRun(A, r.runId)).status).toBe('error');
    const bystanderFrames = await within(bystanderStream.ended, 10_000, 'the run on the surviving runner');
    expect(expectWellFormed(bystanderFrames).event.type).toBe('result');
    const all = (await (await cluster.api(B, '/api/runs')).json()) as Array<{ id: string; status: string }>;
    expect(all).toHaveLength(20 + victims.length + 1);
    expect(all.filter((r) => r.status === 'running')).toEqual([]);

    // 3. The crash took R1's pod: the runner and its sidecar worker, whose memory held the sessions' histories. The
    // worker restarts empty (so the earlier turn can only come back from the conductor's saved state bundle)…
    const earlier = onR1[3];
    const earlierPrompt = `hello number ${runs.indexOf(earlier)}`;
    await cluster.worker.kill('SIGKILL');
    await cluster.worker.start();
    expect((await fetch(`${cluster.worker.url}/state/${earlier.sessionId}`)).status).toBe(404);
    // …R1 restarts on the same port, and both conductors see it again (an operator's dashboard polling topology)…
    await R1.start();
    for (const conductor of [A, B]) {
      await vi.waitFor(async () => {
        const topology = (await (await cluster.api(conductor, '/api/topology')).json()) as { runners: Array<{ url: string; healthy: boolean }> };
        expect(topology.runners.find((r) => r.url === R1.url)?.healthy).toBe(true);
      }, WAIT);
    }
    // …its profiles come back with no client call (the conductors' reconcile loop pushes them)…
    await vi.waitFor(async () => {
      const res = await cluster.runnerApi(R1, '/runner/profiles');
      expect(res.status).toBe(200);
      expect((await res.json()).profiles).toContainEqual(expect.objectContaining({ name: 'helper' }));
    }, WAIT);
    // …and a run on one of its old sessions hydrates the session onto R1 and continues the conversation.
    expect((await cluster.runnerApi(R1, `/runner/sessions/${earlier.sessionId}`)).status).toBe(404);
    const resumed = await startRun(A, { sessionId: earlier.sessionId, prompt: 'what did I say first?' });
    expect(resumed.sessionId).toBe(earlier.sessionId);
    expect(expectWellFormed(await within(readStream(A, resumed.runId), 10_000, 'the resumed run')).event.type).toBe('result');
    expect((await cluster.runnerApi(R1, `/runner/sessions/${earlier.sessionId}`)).status).toBe(200);
    const request = modelRequests(cluster.fake).findLast((r) => lastUserPrompt(r) === 'what did I say first?');
    expect(request, 'the model request of the resumed run').toBeDefined();
    expect(JSON.stringify(request!.body)).toContain(earlierPrompt);
    const session = await (await cluster.api(B, `/api/sessions/${earlier.sessionId}`)).json();
    expect(session).toMatchObject({ id: earlier.sessionId, status: 'idle', runCount: 2, lastRunStatus: 'ok' });

    // 4. A run started on A, streamed through B: every event in order to the terminal, live and resumed.
    const crossing = await startRun(A, { prompt: 'SLOW_DELTAS 20 60' });
    const full = follow(B, crossing.runId);
    const partial = follow(B, crossing.runId);
    await vi.waitFor(() => expect(partial.frames.length).toBeGreaterThanOrEqual(3), WAIT);
    partial.close();
    const seen = [...(await partial.ended)];
    expect(seen.some((f) => isTerminalEvent(f.event)), 'the first connection hung up mid-run').toBe(false);
    const rest = await within(readStream(B, crossing.runId, seen.at(-1)!.id), 10_000, 'the resumed stream on B');
    const fullFrames = await within(full.ended, 10_000, 'the full stream on B');
    expect(expectWellFormed(fullFrames).event.type).toBe('result');
    expect(fullFrames.filter((f) => f.event.type === 'assistant' && f.event.delta).map((f) => f.event.message).join('')).toBe(Array.from({ length: 20 }, (_, i) => `d${i} `).join(''));
    expect(expectWellFormed([...seen, ...rest])).toBeDefined();
    expect([...seen, ...rest]).toEqual(fullFrames);
    const durable = await getRun(A, crossing.runId);
    expect(durable.status).toBe('ok');
    expect(fullFrames.map((f) => f.event)).toEqual(durable.events);
    // after the end, Last-Event-ID on B replays only the later events
    const later = await readStream(B, crossing.runId, 5);
    expect(later).toEqual(fullFrames.slice(5));
  }, 60_000);

  it('cancels a run through the other conductor: the replica driving it stops it, with one terminal event', async () => {
    dumpLogsOnFailure();
    const run = await startRun(A, { prompt: 'SLOW_DELTAS 200 50 cancelled elsewhere' });
    const onA = follow(A, run.runId);
    await vi.waitFor(() => expect(hasAssistant(onA)).toBe(true), WAIT);
    expect((await cluster.api(B, `/api/runs/${run.runId}`, { method: 'DELETE' })).status).toBe(204);
    const frames = await within(onA.ended, 10_000, 'the stream of the run cancelled through the other conductor');
    expect(expectWellFormed(frames).event).toMatchObject({ type: 'error', message: 'run cancelled' });
    expect((await getRun(A, run.runId)).status).toBe('cancelled');
    // the model call was abandoned: the driver on A really stopped
    await vi.waitFor(() => expect(modelRequests(cluster.fake).find((r) => lastUserPrompt(r)?.includes('cancelled elsewhere'))?.clientClosedEarly).toBe(true), WAIT);
  });

  it('a conductor crash hands its runs to the other replica, which completes them; the conductor boots again', async () => {
    dumpLogsOnFailure();
    const ofA = await startRun(A, { prompt: 'SLOW_DELTAS 120 40' });
    const ofB = await startRun(B, { prompt: 'SLOW_DELTAS 80 40' });
    const aOnB = follow(B, ofA.runId);
    const bOnB = follow(B, ofB.runId);
    await vi.waitFor(() => expect(hasAssistant(aOnB) && hasAssistant(bOnB)).toBe(true), WAIT);

    await A.kill('SIGKILL');
    // B's sweep finds A's lease expired and adopts A's run: it re-attaches on the runner, which kept the run going.
    const aFrames = await within(aOnB.ended, 20_000, 'the stream of the crashed conductor’s run');
    expect(expectWellFormed(aFrames).event).toMatchObject({ type: 'result' });
    const deltas = aFrames.filter((f) => f.event.type === 'assistant' && f.event.delta).map((f) => String(f.event.message ?? ''));
    expect(deltas.join('')).toBe(Array.from({ length: 120 }, (_, i) => `d${i} `).join(''));
    expect((await getRun(B, ofA.runId)).status).toBe('ok');

    // B's own run went on untouched.
    const bFrames = await within(bOnB.ended, 10_000, 'the stream of B’s run');
    expect(expectWellFormed(bFrames).event.type).toBe('result');
    expect((await getRun(B, ofB.runId)).status).toBe('ok');

    // The adopted run's session is free again, on the runner too.
    const after = await startRun(B, { sessionId: ofA.sessionId, prompt: 'after the crash' });
    expect(expectWellFormed(await within(readStream(B, after.runId), 10_000, 'a run on the freed session')).event.type).toBe('result');

    // A boots again (same instance id, same port) and serves.
    await A.start();
    expect(await (await fetch(`${A.url}/healthz`)).text()).toBe('ok');
    expect((await getRun(A, ofA.runId)).status).toBe('ok');
    const fresh = await startRun(A, { prompt: 'back again' });
    const frames = await within(readStream(A, fresh.runId), 10_000, 'a run on the restarted conductor');
    expect(expectWellFormed(frames).event).toMatchObject({ type: 'result', message: expect.stringContaining('FAKE-REPLY: back again') });
  }, 60_000);

  it('a run whose conductor and runner both crashed ends `interrupted`, once, and its session serves again', async () => {
    dumpLogsOnFailure();
    const ofA = await startRun(A, { prompt: 'SLOW_DELTAS 200 50' });
    const onB = follow(B, ofA.runId);
    await vi.waitFor(() => expect(hasAssistant(onB)).toBe(true), WAIT);
    const runner = [R0, R1].find((r) => runnerHash(r.url) === hashOf(ofA.sessionId))!;
    await Promise.all([A.kill('SIGKILL'), runner.kill('SIGKILL')]);

    const frames = await within(onB.ended, 20_000, 'the stream of a run with neither conductor nor runner');
    expect(expectWellFormed(frames).event).toMatchObject({ type: 'error', message: expect.stringContaining('interrupted') });
    expect((await getRun(B, ofA.runId)).status).toBe('interrupted');

    await Promise.all([A.start(), runner.start()]);
    const after = await startRun(B, { sessionId: ofA.sessionId, prompt: 'after both crashed' });
    expect(expectWellFormed(await within(readStream(B, after.runId), 15_000, 'a run on the session after both crashed')).event.type).toBe('result');
  }, 60_000);

  it('replicas booting at the same moment with one bootstrap token all come up', async () => {
    // What two conductors of a fresh deployment do at boot, raced deterministically: each finds no key for the token
    // and inserts it; the losers of the race must accept the winner's key instead of failing to boot.
    const database = await openDatabase({ url: cluster.databaseUrl, dataDir: tmpdir() });
    try {
      const token = 'ao_test_replicasbootingtogether01';
      const deps = { db: database.db, pepper: PEPPER, keyEnv: 'test', log: createLogger('test') };
      const boots = await Promise.allSettled(Array.from({ length: 4 }, () => bootstrapIdentity(deps, { bootstrapToken: token, dataDir: tmpdir(), writeKeyFile: false })));
      expect(boots.map((b) => (b.status === 'rejected' ? String(b.reason) : b.status))).toEqual(Array(4).fill('fulfilled'));
      const who = await fetch(`${B.url}/api/whoami`, { headers: { authorization: `Bearer ${token}` } });
      expect(await who.json()).toMatchObject({ tenantId: 'default', role: 'owner' });
    } finally {
      await database.close();
    }
  });
});
