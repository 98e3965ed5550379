import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSvc, type TestSvc } from '../support/svc.ts';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.ts';

/** Profiles' other operations (issue 23) through the HTTP surface of one `all` instance: pin, history, usage, skills, helper. */
let svc: TestSvc;
let fake: FakeProvider;

beforeAll(async () => {
  fake = await startFakeProvider();
  svc = await startTestSvc({ OPENAI_COMPATIBLE_BASE_URL: fake.url, OPENAI_COMPATIBLE_API_KEY: 'x' }, 'all');
});
afterAll(async () => {
  await svc?.stop();
  await fake?.close();
});

const call = async (method: string, path: string, json?: unknown) => {
  const res = await svc.api(path, { method, ...(json !== undefined ? { json } : {}) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
};
const create = async (body: Record<string, unknown>) => {
  const res = await call('POST', '/api/profiles', { runtime: 'general', model: 'demo:echo', ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
};
/** Starts a run and reads its stream to the terminal event; answers the run's final status. */
const runToEnd = async (profile: string, prompt: string) => {
  const started = await call('POST', '/api/runs', { profile, prompt });
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  await (await svc.api(`/api/runs/${started.body.runId}/stream`)).text();
  return (await call('GET', `/api/runs/${started.body.runId}`)).body.status as string;
};

describe('pin and unpin', () => {
  it('puts pinned profiles first in the list and shows pinned on list and get', async () => {
    for (const name of ['pin-a', 'pin-b', 'pin-c']) await create({ name });
    const pinned = await call('POST', '/api/profiles/pin-c/pin');
    expect(pinned.status).toBe(200);
    expect(pinned.body).toMatchObject({ name: 'pin-c', pinned: true });
    const names = (await call('GET', '/api/profiles')).body.filter((p: any) => p.name.startsWith('pin-')).map((p: any) => [p.name, p.pinned]);
    expect(names).toEqual([['pin-c', true], ['pin-a', false], ['pin-b', false]]);
    expect((await call('GET', '/api/profiles/pin-c')).body.pinned).toBe(true);

    expect((await call('DELETE', '/api/profiles/pin-c/pin')).body).toMatchObject({ name: 'pin-c', pinned: false });
    const after = (await call('GET', '/api/profiles')).body.filter((p: any) => p.name.startsWith('pin-')).map((p: any) => p.name);
    expect(after).toEqual(['pin-a', 'pin-b', 'pin-c']);
  });

  it('answers 404 for an unknown profile', async () => {
    expect(await call('POST', '/api/profiles/nope/pin')).toMatchObject({ status: 404, body: { error: 'unknown profile: nope' } });
  });
});

describe('history', () => {
  it('keeps every change, newest first, with the fields that changed, and pages', async () => {
    await create({ name: 'hist', systemPrompt: 'v1' });
    const put = (body: Record<string, unknown>) => call('PUT', '/api/profiles/hist', { name: 'hist', runtime: 'general', model: 'demo:echo', ...body });
    expect((await put({ systemPrompt: 'v2' })).status).toBe(200);
    expect((await put({ systemPrompt: 'v2', tools: ['@files'] })).status).toBe(200);
    expect((await put({ systemPrompt: 'v3', tools: ['@files'] })).status).toBe(200);

    const { body, status } = await call('GET', '/api/profiles/hist/history');
    expect(status).toBe(200);
    expect(body.map((h: any) => h.version)).toEqual([4, 3, 2, 1]);
    expect(body[0]).toEqual({ version: 4, changedAt: expect.any(String), changedBy: expect.stringMatching(/^key:/), changes: { systemPrompt: { from: 'v2', to: 'v3' } } });
    expect(body[1].changes).toEqual({ tools: { from: null, to: ['@files'] } });
    expect(body[2].changes).toEqual({ systemPrompt: { from: 'v1', to: 'v2' } });
    expect(body[3].changes).toEqual({ name: { from: null, to: 'hist' }, runtime: { from: null, to: 'general' }, model: { from: null, to: 'demo:echo' }, systemPrompt: { from: null, to: 'v1' } });
    expect(Date.parse(body[0].changedAt)).toBeGreaterThanOrEqual(Date.parse(body[3].changedAt));

    const page = await call('GET', '/api/profiles/hist/history?limit=2&offset=1');
    expect(page.headers.get('x-total-count')).toBe('4');
    expect(page.body.map((h: any) => h.version)).toEqual([3, 2]);
  });

  it('records nothing for a replace that changes nothing', async () => {
    await create({ name: 'hist-same' });
    expect((await call('PUT', '/api/profiles/hist-same', { name: 'hist-same', runtime: 'general', model: 'demo:echo' })).status).toBe(200);
    expect((await call('GET', '/api/profiles/hist-same/history')).body.map((h: any) => h.version)).toEqual([1]);
  });

  it('answers 404 for an unknown profile', async () => {
    expect((await call('GET', '/api/profiles/nope/history')).status).toBe(404);
  });
});

describe('usage', () => {
  it('counts runs, failed runs, tokens and cost after two runs', async () => {
    await create({ name: 'busy', model: 'openai-compatible:fake-model' });
    expect((await call('GET', '/api/profiles/busy/usage')).body).toMatchObject({ runs: 0, failedRuns: 0, tokens: { total: 0 } });
    expect(await runToEnd('busy', 'hello there')).toBe('ok');
    expect(await runToEnd('busy', 'FAIL_HTTP_400')).toBe('error');

    const { status, body } = await call('GET', '/api/profiles/busy/usage?window=24h');
    expect(status).toBe(200);
    expect(body).toMatchObject({ profile: 'busy', window: '24h', runs: 2, failedRuns: 1, costMicroUsd: expect.any(Number), costUsd: expect.any(Number) });
    expect(body.tokens.input).toBeGreaterThan(0);
    expect(body.tokens.output).toBeGreaterThan(0);
    expect(body.tokens.total).toBe(body.tokens.input + body.tokens.output + body.tokens.cacheRead + body.tokens.cacheWrite);
    expect(body.byModel).toEqual([expect.objectContaining({ model: 'openai-compatible:fake-model', runs: 2, failedRuns: 1 })]);
  });

  it('refuses an unknown window with 400 naming the allowed ones', async () => {
    expect(await call('GET', '/api/profiles/busy/usage?window=2y')).toMatchObject({ status: 400, body: { error: 'window: one of 1h, 24h, 7d, 30d, 90d, all' } });
  });
});

describe('skills', () => {
  it('attaches a catalog skill, refuses an unknown one, detaches, and records both in history', async () => {
    await create({ name: 'skilled' });
    const attached = await call('POST', '/api/profiles/skilled/skills/skill-authoring');
    expect(attached).toMatchObject({ status: 200, body: { name: 'skilled', skills: ['skill-authoring'] } });
    expect((await call('GET', '/api/profiles/skilled')).body.skills).toEqual(['skill-authoring']);
    // attaching again changes nothing
    expect((await call('POST', '/api/profiles/skilled/skills/skill-authoring')).body.skills).toEqual(['skill-authoring']);

    expect(await call('POST', '/api/profiles/skilled/skills/no-such-skill')).toMatchObject({ status: 400, body: { error: 'unknown skill: no-such-skill' } });

    expect(await call('DELETE', '/api/profiles/skilled/skills/skill-authoring')).toMatchObject({ status: 200, body: { skills: [] } });
    expect(await call('DELETE', '/api/profiles/skilled/skills/skill-authoring')).toMatchObject({ status: 404, body: { error: 'profile skilled has no skill skill-authoring' } });

    const history = (await call('GET', '/api/profiles/skilled/history')).body;
    expect(history.map((h: any) => h.changes.skills ?? null)).toEqual([{ from: ['skill-authoring'], to: [] }, { from: null, to: ['skill-authoring'] }, null]);
  });
});

describe('the helper profile', () => {
  it('is seeded once: created the first time, left as it is after', async () => {
    const first = await call('POST', '/api/profiles/helper');
    expect(first).toMatchObject({ status: 201, body: { profileName: 'helper', created: true } });
    const helper = (await call('GET', '/api/profiles/helper')).body;
    expect(helper).toMatchObject({ name: 'helper', runtime: 'general', model: 'demo:echo', tools: ['@default'], systemPrompt: expect.stringContaining('svc helper') });

    const second = await call('POST', '/api/profiles/helper');
    expect(second).toMatchObject({ status: 200, body: { profileName: 'helper', created: false } });
    expect((await call('GET', '/api/profiles/helper')).body).toEqual(helper);
  });

  it('runs', async () => {
    expect(await runToEnd('helper', 'hi')).toBe('ok');
  });
});
