import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { tmpdir } from 'node:os';
import { openDatabase, withSystem, type Database } from '../../src/db/index.ts';
import { server } from '../support/backends.ts';
import { startTestSvc, type TestSvc } from '../support/svc.ts';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.ts';

/** Automations through the real HTTP surface of one `all` instance: routes, transitions, firings as ordinary runs, the scheduler. */
let svc: TestSvc;
let fake: FakeProvider;
let cleanup: () => Promise<void>;
let database: Database;

beforeAll(async () => {
  fake = await startFakeProvider();
  const db = await server.setup();
  cleanup = db.cleanup;
  database = await openDatabase({ url: db.url, dataDir: tmpdir() });
  svc = await startTestSvc({ DATABASE_URL: db.url, OPENAI_COMPATIBLE_BASE_URL: fake.url, OPENAI_COMPATIBLE_API_KEY: 'x' }, 'all');
  for (const [name, model] of [['demo', 'demo:echo'], ['fake', 'openai-compatible:fake-model']]) {
    expect((await svc.api('/api/profiles', { method: 'POST', json: { name, runtime: 'general', model } })).status).toBe(201);
  }
  const learner = { name: 'learner', runtime: 'general', model: 'openai-compatible:fake-model', tools: ['automation_memory'] };
  expect((await svc.api('/api/profiles', { method: 'POST', json: learner })).status).toBe(201);
});
afterAll(async () => {
  await database?.close();
  await svc?.stop();
  await fake?.close();
  await cleanup?.();
});

const call = async (method: string, path: string, json?: unknown) => {
  const res = await svc.api(path, { method, ...(json !== undefined ? { json } : {}) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
};
const create = async (body: Record<string, unknown>) => {
  const res = await call('POST', '/api/automations', { profile: 'demo', cron: '0 9 * * *', ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
};
const firingsOf = async (id: string) => (await call('GET', `/api/automations/firings?automation=${id}`)).body as any[];
const settled = async (id: string, n: number) => {
  await vi.waitFor(async () => expect((await firingsOf(id)).filter((f) => f.outcome !== null).length).toBeGreaterThanOrEqual(n), { timeout: 15_000, interval: 100 });
  return firingsOf(id);
};

describe('automations: the object and its validation', () => {
  it('creates an active automation with its next run in its timezone', async () => {
    const a = await create({ name: 'morning', prompt: 'summarise', timezone: 'Europe/Berlin' });
    expect(a).toEqual({
      id: expect.stringMatching(/^aut_/),
      name: 'morning',
      profile: 'demo',
      prompt: 'summarise',
      cron: '0 9 * * *',
      timezone: 'Europe/Berlin',
      startAt: null,
      endAt: null,
      sessionMode: 'fresh',
      overlap: 'skip',
      maxConsecutiveFailures: 5,
      status: 'active',
      nextRunAt: expect.any(String),
      lastFiredAt: null,
      consecutiveFailures: 0,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      deletedAt: null,
    });
    const next = new Date(a.nextRunAt);
    expect(next.getTime()).toBeGreaterThan(Date.now());
    expect(new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', hour: '2-digit', minute: '2-digit' }).format(next)).toBe('09:00');
    expect((await call('GET', `/api/automations/${a.id}`)).body).toEqual(a);
  });

  it.each([
    [{ cron: '0 0 30 2 *' }, /^cron: .*never fires/],
    [{ cron: 'every day' }, /^cron: /],
    [{ timezone: 'Mars/Olympus' }, /^timezone: unknown IANA timezone/],
    [{ startAt: '2030-02-01T00:00:00Z', endAt: '2030-01-01T00:00:00Z' }, /^endAt: /],
    [{ startAt: '2030-01-01T00:00:00Z', endAt: '2030-01-01T00:00:00Z' }, /^endAt: /],
    [{ profile: 'nobody' }, /^profile: unknown profile: nobody/],
    [{ sessionMode: 'sticky' }, /^sessionMode: /],
    [{ maxConsecutiveFailures: 0 }, /^maxConsecutiveFailures: /],
  ])('refuses %o with 400 naming the field', async (patch, message) => {
    const res = await call('POST', '/api/automations', { name: 'bad', profile: 'demo', cron: '0 9 * * *', ...patch });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(message);
  });

  it('lists with X-Total-Count, q and includeDeleted; GET still shows a deleted one; /api/schedules is the same list', async () => {
    const a = await create({ name: 'list-alpha', prompt: 'needle in a haystack' });
    const b = await create({ name: 'list-beta' });
    const page = await call('GET', '/api/automations?q=needle');
    expect(page.body.map((x: any) => x.id)).toEqual([a.id]);
    expect(page.headers.get('x-total-count')).toBe('1');
    expect((await call('DELETE', `/api/automations/${b.id}`)).status).toBe(204);
    expect((await call('GET', '/api/automations?q=list-')).body.map((x: any) => x.id)).toEqual([a.id]);
    expect((await call('GET', '/api/automations?q=list-&includeDeleted=true')).body.map((x: any) => x.id)).toEqual([b.id, a.id]);
    expect((await call('GET', `/api/automations/${b.id}`)).body).toMatchObject({ id: b.id, status: 'stopped', nextRunAt: null, deletedAt: expect.any(String) });
    expect((await call('GET', '/api/schedules?q=list-')).body.map((x: any) => x.id)).toEqual([a.id]);
    const limited = await call('GET', '/api/automations?limit=1');
    expect(limited.body).toHaveLength(1);
    expect(Number(limited.headers.get('x-total-count'))).toBeGreaterThan(1);
    expect((await call('POST', `/api/automations/${b.id}/start`)).status).toBe(404);
  });

  it('a name is taken once among live automations, and cannot be changed', async () => {
    const a = await create({ name: 'unique-name' });
    expect((await call('POST', '/api/automations', { name: 'unique-name', profile: 'demo', cron: '* * * * *' })).status).toBe(409);
    const res = await call('PUT', `/api/automations/${a.id}`, { name: 'renamed' });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/^name: /);
  });
});

describe('POST /api/schedules/parse', () => {
  it('turns a phrase into cron with a description and the next five runs in the timezone', async () => {
    const res = await call('POST', '/api/schedules/parse', { text: 'weekdays at 08:30', timezone: 'America/New_York' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ cron: '30 8 * * 1-5', timezone: 'America/New_York', description: 'At 08:30 on weekdays (Monday to Friday)', nextRuns: expect.any(Array) });
    expect(res.body.nextRuns).toHaveLength(5);
    for (const r of res.body.nextRuns) {
      const d = new Date(r);
      expect(new Intl.DateTimeFormat('en-US', { timeZone: 'America/New_York', weekday: 'short', hour: '2-digit', minute: '2-digit', hour12: false }).format(d)).toMatch(/^(Mon|Tue|Wed|Thu|Fri) 08:30$/);
    }
    expect((await call('POST', '/api/schedules/parse', { text: 'hourly' })).body).toMatchObject({ cron: '0 * * * *', timezone: 'UTC' });
  });

  it('is 422 for a phrase it cannot read, 400 for an unknown timezone, and only under /api/schedules', async () => {
    const res = await call('POST', '/api/schedules/parse', { text: 'whenever the moon is full' });
    expect(res.status).toBe(422);
    expect(res.body.error).toMatch(/^text: /);
    expect((await call('POST', '/api/schedules/parse', { text: 'hourly', timezone: 'Nowhere/Land' })).status).toBe(400);
    expect((await call('POST', '/api/automations/parse', { text: 'hourly' })).status).toBe(404);
  });
});

describe('automations: transitions', () => {
  it('stop clears nextRunAt, start computes it from now; pause is stop under /api/automations only', async () => {
    const a = await create({ name: 'stop-start' });
    expect((await call('POST', `/api/automations/${a.id}/stop`)).body).toMatchObject({ status: 'stopped', nextRunAt: null });
    expect((await call('POST', `/api/schedules/${a.id}/pause`)).status).toBe(404);
    const started = (await call('POST', `/api/schedules/${a.id}/start`)).body;
    expect(started).toMatchObject({ status: 'active', nextRunAt: a.nextRunAt, consecutiveFailures: 0 });
    expect((await call('POST', `/api/automations/${a.id}/pause`)).body).toMatchObject({ status: 'stopped', nextRunAt: null });
  });

  it('an update that closes the window stops it; start is then 409 (past its end date)', async () => {
    const a = await create({ name: 'window' });
    const updated = await call('PUT', `/api/automations/${a.id}`, { endAt: new Date(Date.now() - 60_000).toISOString() });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ status: 'stopped', nextRunAt: null });
    const res = await call('POST', `/api/automations/${a.id}/start`);
    expect(res.status).toBe(409);
    expect(res.body.error).toMatch(/past its end date/);
  });

  it('an update of an active automation recomputes the next run', async () => {
    const a = await create({ name: 'recompute', cron: '0 9 * * *', timezone: 'UTC' });
    const b = (await call('PUT', `/api/automations/${a.id}`, { cron: '30 17 * * *' })).body;
    expect(new Date(b.nextRunAt).toISOString()).toMatch(/T17:30:00\.000Z$/);
    expect((await call('PUT', `/api/automations/${a.id}`, { cron: '0 0 30 2 *' })).status).toBe(400);
  });

  it('run-now answers 202 with the firing; its run is an ordinary run; status and nextRunAt stay', async () => {
    const a = await create({ name: 'run-now', prompt: 'hello from the schedule' });
    await call('POST', `/api/automations/${a.id}/stop`);
    const res = await call('POST', `/api/automations/${a.id}/run`);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ id: expect.stringMatching(/^fir_/), automationId: a.id, outcome: null, runId: expect.stringMatching(/^run_/), error: null });
    const [firing] = await settled(a.id, 1);
    expect(firing).toMatchObject({ id: res.body.id, outcome: 'ok', sessionId: expect.any(String) });
    const run = (await call('GET', `/api/runs/${firing.runId}`)).body;
    expect(run).toMatchObject({ id: firing.runId, status: 'ok', subTask: { profile: 'demo', prompt: 'hello from the schedule' } });
    expect((await call('GET', '/api/runs')).body.map((r: any) => r.id)).toContain(firing.runId);
    expect((await call('GET', `/api/automations/${a.id}`)).body).toMatchObject({ status: 'stopped', nextRunAt: null, lastFiredAt: expect.any(String) });
  });

  it('delete is soft and lets a firing in flight finish: its run ends ok and its outcome is recorded', async () => {
    const a = await create({ name: 'deleted-mid-run', profile: 'fake', prompt: 'HOLD deletedmidrun' });
    const fired = (await call('POST', `/api/automations/${a.id}/run`)).body;
    await fake.when(() => fake.requests.some((r) => JSON.stringify(r.body).includes('HOLD deletedmidrun')));
    expect((await call('DELETE', `/api/automations/${a.id}`)).status).toBe(204);
    expect((await call('GET', `/api/runs/${fired.runId}`)).body).toMatchObject({ status: 'running' });
    fake.release('deletedmidrun');
    const [firing] = await settled(a.id, 1);
    expect(firing).toMatchObject({ id: fired.id, outcome: 'ok' });
    expect((await call('GET', `/api/runs/${fired.runId}`)).body).toMatchObject({ status: 'ok' });
    expect((await call('GET', `/api/automations/${a.id}`)).body).toMatchObject({ status: 'stopped', nextRunAt: null, deletedAt: expect.any(String), consecutiveFailures: 0 });
  });

  it('three failed firings in a row with maxConsecutiveFailures 3 disable it; update is 409 until started', async () => {
    const a = await create({ name: 'flaky', profile: 'fake', prompt: 'FAIL_HTTP_400', maxConsecutiveFailures: 3 });
    for (let i = 1; i <= 3; i++) {
      expect((await call('POST', `/api/automations/${a.id}/run`)).status).toBe(202);
      await settled(a.id, i);
    }
    expect((await firingsOf(a.id)).map((f) => f.outcome)).toEqual(['failed', 'failed', 'failed']);
    expect((await call('GET', `/api/automations/firings?automation=${a.id}&outcome=ok`)).body).toEqual([]);
    expect((await call('GET', `/api/automations/${a.id}`)).body).toMatchObject({ status: 'disabled', nextRunAt: null, consecutiveFailures: 3 });
    const res = await call('PUT', `/api/automations/${a.id}`, { prompt: 'better' });
    expect(res.status).toBe(409);
    expect((await call('POST', `/api/automations/${a.id}/start`)).body).toMatchObject({ status: 'active', consecutiveFailures: 0 });
    expect((await call('PUT', `/api/automations/${a.id}`, { prompt: 'better' })).body).toMatchObject({ prompt: 'better', status: 'active' });
  });
});

describe('automations: persistent sessions', () => {
  it("a persistent automation keeps one session, so the second firing's model request carries the first exchange", async () => {
    const a = await create({ name: 'persistent', profile: 'fake', prompt: 'count the kumquats', sessionMode: 'persistent' });
    await call('POST', `/api/automations/${a.id}/run`);
    await settled(a.id, 1);
    await call('POST', `/api/automations/${a.id}/run`);
    const [second, first] = await settled(a.id, 2);
    expect([first.outcome, second.outcome]).toEqual(['ok', 'ok']);
    expect(second.sessionId).toBe(first.sessionId);
    const last = JSON.stringify(fake.requests.at(-1)!.body);
    // the first prompt, the first reply (the fake provider answers FAKE-REPLY: <prompt>), the second prompt
    expect(last).toContain('FAKE-REPLY: count the kumquats');
    expect(last.split('count the kumquats').length - 1).toBe(3);
  });

  it("a persistent automation's second model request carries the first exchange and the note its tool call wrote", async () => {
    const a = await create({ name: 'persistent-learner', profile: 'learner', prompt: 'CALL_TOOL automation_memory {"body":"kumquats at 11"}', sessionMode: 'persistent' });
    await call('POST', `/api/automations/${a.id}/run`);
    const [first] = await settled(a.id, 1);
    expect(first.outcome).toBe('ok');
    const seen = fake.requests.length;
    await call('POST', `/api/automations/${a.id}/run`);
    const [second] = await settled(a.id, 2);
    expect(second).toMatchObject({ outcome: 'ok', sessionId: first.sessionId });
    // the second firing's first model request: its prompt with the note, after the first firing's whole exchange
    const request = fake.requests.slice(seen).find((r) => JSON.stringify(r.body).includes('<automation-memory>'));
    expect(request, 'a model request of the second firing carries the memory note').toBeDefined();
    const messages = (request!.body as any).messages as any[];
    const text = (m: any) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? ''));
    const lastUser = messages.findLastIndex((m) => m.role === 'user');
    expect(text(messages[lastUser])).toContain('<automation-memory>\nkumquats at 11\n</automation-memory>');
    const history = messages.slice(0, lastUser);
    expect(history.some((m) => m.role === 'user' && text(m).includes('CALL_TOOL automation_memory'))).toBe(true); // the first prompt
    expect(history.some((m) => m.role === 'assistant' && m.tool_calls?.some((t: any) => t.function.name === 'automation_memory'))).toBe(true); // its tool call
    expect(history.some((m) => m.role === 'tool')).toBe(true); // and the tool's result
  });

  it('a fresh automation starts a new session each firing', async () => {
    const a = await create({ name: 'fresh', profile: 'fake', prompt: 'fresh every time' });
    await call('POST', `/api/automations/${a.id}/run`);
    await settled(a.id, 1);
    await call('POST', `/api/automations/${a.id}/run`);
    const [second, first] = await settled(a.id, 2);
    expect(second.sessionId).not.toBe(first.sessionId);
    expect(JSON.stringify(fake.requests.at(-1)!.body)).not.toContain('FAKE-REPLY: fresh every time');
  });
});

describe('automations: memory', () => {
  it('keeps a note of at most 8 KB, gives it to each firing, and clears it when empty', async () => {
    const a = await create({ name: 'memo', prompt: 'check the queue' });
    expect((await call('GET', `/api/automations/${a.id}/memory`)).body).toEqual({ body: '' });
    const put = await call('PUT', `/api/automations/${a.id}/memory`, { body: 'last count: 7' });
    expect(put.body).toEqual({ body: 'last count: 7', updatedAt: expect.any(String) });
    expect((await call('GET', `/api/automations/${a.id}/memory`)).body).toEqual(put.body);
    const big = await call('PUT', `/api/automations/${a.id}/memory`, { body: 'x'.repeat(8 * 1024 + 1) });
    expect(big.status).toBe(413);
    const fired = (await call('POST', `/api/automations/${a.id}/run`)).body;
    await settled(a.id, 1);
    expect((await call('GET', `/api/runs/${fired.runId}`)).body.subTask.prompt).toContain('last count: 7');
    expect((await call('PUT', `/api/automations/${a.id}/memory`, { body: '' })).body).toMatchObject({ body: '' });
  });
});

describe('automations: the automation_memory tool', () => {
  it("the note a firing writes with the tool is in the next firing's prompt; a run that is no firing gets 404", async () => {
    const a = await create({ name: 'learns', profile: 'learner', prompt: 'CALL_TOOL automation_memory {"body":"seen the queue at 7"}' });
    await call('POST', `/api/automations/${a.id}/run`);
    const [first] = await settled(a.id, 1);
    expect(first.outcome).toBe('ok');
    expect((await call('GET', `/api/automations/${a.id}/memory`)).body).toEqual({ body: 'seen the queue at 7', updatedAt: expect.any(String) });
    const seen = fake.requests.length;
    const second = (await call('POST', `/api/automations/${a.id}/run`)).body;
    await settled(a.id, 2);
    expect((await call('GET', `/api/runs/${second.runId}`)).body.subTask.prompt).toContain('<automation-memory>\nseen the queue at 7\n</automation-memory>');
    // the second firing's model request (earlier tests' firings carry notes of their own)
    const request = JSON.stringify(fake.requests.slice(seen).find((r) => JSON.stringify(r.body).includes('<automation-memory>'))!.body);
    expect(request).toContain('seen the queue at 7');

    const plain = await call('POST', '/api/runs', { profile: 'learner', prompt: 'CALL_TOOL automation_memory {"body":"nope"}' });
    const res = await svc.api(`/api/runs/${plain.body.runId}/stream`);
    const text = await res.text();
    expect(text).toMatch(/no automation firing/);
  });
});

describe('automations: the scheduler', () => {
  it('fires an every-second automation on its own, one firing per slot, each an ordinary run', async () => {
    const a = await create({ name: 'every-second', cron: '* * * * * *' });
    const firings = await settled(a.id, 3);
    await call('POST', `/api/automations/${a.id}/stop`);
    const slots = firings.map((f) => f.scheduledFor);
    expect(new Set(slots).size).toBe(slots.length);
    for (const f of firings.filter((x) => x.outcome === 'ok')) {
      expect(f.scheduledFor).toMatch(/\.000Z$/);
      expect((await call('GET', `/api/runs/${f.runId}`)).body).toMatchObject({ status: 'ok' });
    }
  });

  it('a slot missed while everything was down is skipped, not replayed: the next run moves to the next slot', async () => {
    const a = await create({ name: 'missed-slot', cron: '0 9 * * *' });
    const yesterday = new Date(Date.parse(a.nextRunAt) - 2 * 86_400_000);
    await withSystem(database.db, (tx) => tx.updateTable('automations').set({ next_run_at: yesterday }).where('id', '=', a.id).execute());
    await vi.waitFor(async () => expect((await call('GET', `/api/automations/${a.id}`)).body.nextRunAt).toBe(a.nextRunAt), { timeout: 15_000, interval: 100 });
    expect(await firingsOf(a.id)).toEqual([]);
    expect((await call('GET', `/api/automations/${a.id}`)).body).toMatchObject({ status: 'active', lastFiredAt: null });
  });

  it('a firing whose run never started (its conductor died after the claim) does not block the next slots', async () => {
    const a = await create({ name: 'after-a-crash', cron: '* * * * * *' });
    await call('POST', `/api/automations/${a.id}/stop`);
    await withSystem(database.db, (tx) =>
      tx
        .insertInto('automation_firings')
        .values({ id: 'fir_stuck', tenant_id: 'default', automation_id: a.id, scheduled_for: new Date(Date.now() - 120_000), fired_at: new Date(Date.now() - 120_000), run_id: 'run_never_started' })
        .execute(),
    );
    await call('POST', `/api/automations/${a.id}/start`);
    await vi.waitFor(async () => expect((await firingsOf(a.id)).filter((f) => f.outcome === 'ok').length).toBeGreaterThanOrEqual(1), { timeout: 15_000, interval: 100 });
    await call('POST', `/api/automations/${a.id}/stop`);
    await vi.waitFor(async () => expect((await firingsOf(a.id)).find((f) => f.id === 'fir_stuck')).toMatchObject({ outcome: 'failed', error: expect.stringMatching(/never started/) }), { timeout: 20_000, interval: 200 });
  }, 40_000);
});
