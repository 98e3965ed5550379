import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentsHarness, type AgentsHarness } from '../support/agents.ts';
import { cli, spawnCli, tempDir } from '../support/cli.ts';
import { createTestDatabase } from '../support/pg.ts';
import { readSse, type RunEventLike } from '../support/sse.ts';

/**
 * Busy sessions (issue 40, item 8): a run posted to a session that has one in progress takes a `multitask` strategy.
 * `reject` (the default) answers 409; `enqueue` records it `queued` (its stream opens with a `queued` event) and runs
 * it after the others, in the order they were posted, at most 10 waiting per session; `interrupt` ends the run in
 * progress `cancelled` with reason `interrupted` and runs the new one on the same conversation. A profile may set
 * the default; a queued run is a row, started by the next conductor when the last one stopped. On a database of its
 * own on the PostgreSQL server, through real HTTP; the fake model holds a reply (`HOLD <name>`) until the test
 * releases it, so a run stays in progress without sleeps.
 */
describe('multitask strategies for a busy session', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let h: AgentsHarness;
  const api = (path: string, init?: Parameters<AgentsHarness['svc']['api']>[1]) => h.svc.api(path, init);
  const post = (json: Record<string, unknown>) => api('/api/runs', { method: 'POST', json });
  const start = async (json: Record<string, unknown>) => {
    const res = await post(json);
    expect(res.status).toBe(202);
    return (await res.json()) as { runId: string; sessionId: string; status?: string };
  };
  const events = async (runId: string) => (await readSse(await api(`/api/runs/${runId}/stream`))).map((f) => ({ id: f.id, ...f.event }) as RunEventLike & { id: number; reason?: string; position?: number });
  const run = async (runId: string) => (await (await api(`/api/runs/${runId}`)).json()) as { status: string; startedAt: string; finishedAt: string | null; reason?: string; events: RunEventLike[] };
  /** The model requests whose latest user message is `prompt`, as JSON text (what the model was shown). */
  const shown = (prompt: string) => h.fake.requests.filter((r) => r.wire === 'chat' && JSON.stringify(r.body.messages.at(-1)).includes(prompt)).map((r) => JSON.stringify(r.body.messages));

  beforeAll(async () => {
    db = await createTestDatabase();
    h = await startAgentsHarness({}, { databaseUrl: db.url });
    for (const body of [{ name: 'plain' }, { name: 'queuer', multitask: 'enqueue' }]) {
      expect((await api('/api/profiles', { method: 'POST', json: { runtime: 'general', model: 'openai-compatible:fake-model', ...body } })).status).toBe(201);
    }
  }, 60_000);
  afterAll(async () => {
    await h?.stop();
    await db?.drop();
  });

  it('reject (the default) answers 409, and an unknown strategy 400 naming the allowed ones', async () => {
    const first = await start({ profile: 'plain', prompt: 'HOLD rej\nbusy' });
    expect(first.status).toBeUndefined(); // a run that starts at once answers {runId, sessionId}, as always
    for (const extra of [{}, { multitask: 'reject' }]) {
      const res = await post({ profile: 'plain', sessionId: first.sessionId, prompt: 'second', ...extra });
      expect(res.status).toBe(409);
      expect((await res.json()).error).toBe('session busy: a run is in progress on this session');
    }
    const bad = await post({ profile: 'plain', sessionId: first.sessionId, prompt: 'second', multitask: 'later' });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toBe('multitask: expected one of reject, enqueue, interrupt');
    const badProfile = await api('/api/profiles', { method: 'POST', json: { name: 'odd', runtime: 'general', model: 'openai-compatible:fake-model', multitask: 'queue' } });
    expect(badProfile.status).toBe(400);
    expect((await badProfile.json()).error).toMatch(/multitask: expected .*reject.*enqueue.*interrupt/);
    h.fake.release('rej');
    expect((await events(first.runId)).at(-1)).toMatchObject({ type: 'result' });
  });

  it('enqueue runs them after the current one in post order, each continuing the conversation; the 11th waiting is refused with 429', async () => {
    const first = await start({ profile: 'plain', prompt: 'HOLD enq\nremember the word apple' });
    const queued = [];
    for (const prompt of ['one', 'two', 'three']) queued.push(await start({ profile: 'plain', sessionId: first.sessionId, prompt, multitask: 'enqueue' }));
    expect(queued.map((q) => [q.status, q.sessionId])).toEqual(queued.map(() => ['queued', first.sessionId]));
    const a = await run(queued[0]!.runId);
    expect(a.status).toBe('queued');
    expect(a.events).toEqual([expect.objectContaining({ type: 'queued', position: 1 })]);
    expect((await run(queued[2]!.runId)).events[0]).toMatchObject({ type: 'queued', position: 3 });
    // lists, filters and the stats know the status
    const listed = (await (await api('/api/runs?status=queued')).json()) as Array<{ id: string; status: string }>;
    expect(listed.map((r) => r.id).sort()).toEqual(queued.map((q) => q.runId).sort());
    expect((await api('/api/runs?status=later')).status).toBe(400);
    const stats = (await (await api('/api/stats?window=1h')).json()) as { buckets: Array<{ queuedRuns: number }> };
    expect(stats.buckets.reduce((n, b) => n + b.queuedRuns, 0)).toBe(3);
    // a run posted without a strategy neither jumps the queue nor starts beside it
    expect((await post({ profile: 'plain', sessionId: first.sessionId, prompt: 'impatient' })).status).toBe(409);

    // seven more fill the queue to 10; the 11th is refused, and one of them is cancelled before it starts
    const fillers = [];
    for (let i = 0; i < 7; i++) fillers.push(await start({ profile: 'plain', sessionId: first.sessionId, prompt: `filler ${i}`, multitask: 'enqueue' }));
    const full = await post({ profile: 'plain', sessionId: first.sessionId, prompt: 'eleventh', multitask: 'enqueue' });
    expect(full.status).toBe(429);
    expect((await full.json()).error).toMatch(/^session queue full: 10 runs already wait on session .* \(at most 10\)/);
    expect((await api(`/api/runs/${fillers[0]!.runId}`, { method: 'DELETE' })).status).toBe(204);
    const dropped = await events(fillers[0]!.runId);
    expect(dropped.map((e) => e.type)).toEqual(['queued', 'error']);
    expect((await run(fillers[0]!.runId)).status).toBe('cancelled');

    h.fake.release('enq');
    const last = await events(fillers.at(-1)!.runId);
    expect(last[0]).toMatchObject({ type: 'queued', id: 1 });
    expect(last.at(-1)).toMatchObject({ type: 'result', message: 'FAKE-REPLY: filler 6' });
    // each started once the one before it had finished, in the order they were posted
    const order = [first, ...queued, ...fillers.slice(1)];
    const rows = await Promise.all(order.map((r) => run(r.runId)));
    expect(rows.map((r) => r.status)).toEqual(order.map(() => 'ok'));
    for (let i = 1; i < rows.length; i++) expect(Date.parse(rows[i]!.startedAt)).toBeGreaterThanOrEqual(Date.parse(rows[i - 1]!.finishedAt!));
    const three = await events(queued[2]!.runId);
    expect(three.map((e) => e.id)).toEqual(three.map((_, i) => i + 1));
    expect(three.at(-1)).toMatchObject({ type: 'result', message: 'FAKE-REPLY: three' });
    // the third was shown the conversation so far: the first run's prompt and the replies to one and two
    const seen = shown('three');
    expect(seen).toHaveLength(1);
    for (const text of ['remember the word apple', 'FAKE-REPLY: one', 'FAKE-REPLY: two']) expect(seen[0]).toContain(text);
  });

  it('interrupt ends the current run cancelled with reason interrupted, then runs the new one on the same conversation', async () => {
    const before = await start({ profile: 'plain', prompt: 'remember the word pear' });
    await events(before.runId);
    const current = await start({ profile: 'plain', sessionId: before.sessionId, prompt: 'HOLD intr\na long task' });
    const live = api(`/api/runs/${current.runId}/stream`).then((res) => readSse(res));
    const next = await start({ profile: 'plain', sessionId: before.sessionId, prompt: 'do this instead', multitask: 'interrupt' });
    expect(next.status).toBe('queued');

    const stopped = (await live).map((f) => f.event as RunEventLike & { reason?: string });
    expect(stopped.filter((e) => e.type === 'result' || e.type === 'error')).toEqual([expect.objectContaining({ type: 'error', reason: 'interrupted' })]);
    expect(await run(current.runId)).toMatchObject({ status: 'cancelled', reason: 'interrupted' });
    const after = await events(next.runId);
    expect(after[0]).toMatchObject({ type: 'queued', position: 1 });
    expect(after.at(-1)).toMatchObject({ type: 'result', message: 'FAKE-REPLY: do this instead' });
    expect((await run(next.runId)).status).toBe('ok');
    expect(shown('do this instead')[0]).toContain('remember the word pear');
    h.fake.release('intr');
  });

  it("applies the profile's default when the request omits it, and the request's own over it", async () => {
    const first = await start({ profile: 'queuer', prompt: 'HOLD prof\nbusy' });
    const second = await start({ profile: 'queuer', sessionId: first.sessionId, prompt: 'HOLD prof2\nby default' });
    expect(second.status).toBe('queued');
    expect((await post({ profile: 'queuer', sessionId: first.sessionId, prompt: 'no thanks', multitask: 'reject' })).status).toBe(409);
    h.fake.release('prof');
    // a reader attaching while the queued run is in progress still gets its `queued` event first, then the rest
    await h.fake.when(() => shown('by default').length > 0);
    const res = await api(`/api/runs/${second.runId}/stream`); // attached (headers sent) while the model holds its reply
    h.fake.release('prof2');
    const frames = await readSse(res);
    expect(frames.map((f) => f.id)).toEqual(frames.map((_, i) => i + 1));
    expect(frames[0]!.event).toMatchObject({ type: 'queued' });
    expect(frames.at(-1)!.event).toMatchObject({ type: 'result', message: expect.stringContaining('by default') });
  });

  it('svc run --multitask enqueue waits its turn and streams once it runs; svc runs --status queued lists it meanwhile', async () => {
    const env = { SVC_CONFIG_DIR: tempDir(), SVC_API_URL: h.svc.url, SVC_API_KEY: h.svc.key };
    const first = await start({ profile: 'plain', prompt: 'HOLD cli\nbusy' });
    const follow = spawnCli(['run', 'plain', 'from the cli', '--session', first.sessionId, '--multitask', 'enqueue', '--json'], env);
    await follow.waitFor('stdout', /"type":"queued"/);
    const listed = await cli(['runs', '--status', 'queued', '--json'], env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.json().map((r: { status: string }) => r.status)).toEqual(['queued']);
    h.fake.release('cli');
    expect((await follow.exited).code).toBe(0);
    const lines = follow.stdout().split('\n').filter(Boolean).map((l) => JSON.parse(l));
    expect(lines[1]).toMatchObject({ type: 'queued', position: 1 });
    expect(lines.at(-1)).toMatchObject({ type: 'result', message: 'FAKE-REPLY: from the cli' });
    const bad = await cli(['run', 'plain', 'x', '--session', first.sessionId, '--multitask', 'later'], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('multitask: expected one of reject, enqueue, interrupt');
  });

  it('a queued run survives a conductor restart: the next conductor starts it once its session is free', async () => {
    const first = await start({ profile: 'plain', prompt: 'HOLD restart\nbusy when the conductor stops' });
    const waiting = await start({ profile: 'plain', sessionId: first.sessionId, prompt: 'after the restart', multitask: 'enqueue' });
    await h.stop(); // graceful: the run in progress ends interrupted; the queued one stays a row
    h = await startAgentsHarness({}, { databaseUrl: db.url });
    const after = await events(waiting.runId);
    expect(after[0]).toMatchObject({ type: 'queued' });
    expect(after.at(-1)).toMatchObject({ type: 'result', message: 'FAKE-REPLY: after the restart' });
    expect((await run(first.runId)).status).toBe('interrupted');
    expect((await run(waiting.runId)).status).toBe('ok');
  }, 60_000);
});
