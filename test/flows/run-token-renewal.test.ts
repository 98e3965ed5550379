import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { mintRunToken } from '../../src/modules/conductor/identity/auth.ts';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.ts';
import { freePort } from '../support/listen.ts';
import { createTestDatabase } from '../support/pg.ts';
import { isTerminalEvent, readSse } from '../support/sse.ts';
import { startTestSvc, type TestSvc } from '../support/svc.ts';

/**
 * A run outlives its first run token: with run tokens that live 2 s (SVC_RUN_TOKEN_TTL_S), a run whose model answers
 * only after that token expired still calls its conductor (the `notify` tool) and ends `result`, because its runner
 * renewed the token meanwhile (`POST /api/runs/self/token`). Once on the all-in-one server (the runner calls its
 * conductor in-process) and once with conductor and runner apart over HTTP. The renewal opens no hole: an expired
 * or forged token, another credential, or the token of a run that ended is refused.
 *
 * No test waits on a clock: the model's answer is held until a token minted after the run's own, with the same
 * lifetime, is refused by the conductor (so the run's first token has expired too).
 */
const TTL_S = 2;
const SECRET = 'run-token-renewal-secret-0123456789';
const KEY = new TextEncoder().encode(SECRET);
const INTERNAL_TOKEN = 'run-token-renewal-internal-token';
const MODEL = 'openai-compatible:fake-model';

let fake: FakeProvider;
const dbs: Array<Awaited<ReturnType<typeof createTestDatabase>>> = [];
const stops: Array<() => Promise<void>> = [];

beforeAll(async () => {
  fake = await startFakeProvider();
});
afterAll(async () => {
  for (const stop of stops.reverse()) await stop().catch(() => {});
  await fake?.close();
  for (const db of dbs) await db.drop().catch(() => {});
});

async function database(): Promise<string> {
  const db = await createTestDatabase();
  dbs.push(db);
  return db.url;
}

function common(): Record<string, string> {
  return { SVC_RUN_TOKEN_TTL_S: String(TTL_S), SVC_RUN_TOKEN_SECRET: SECRET, OPENAI_COMPATIBLE_BASE_URL: fake.url, OPENAI_COMPATIBLE_API_KEY: 'x' };
}

async function started(svc: TestSvc): Promise<TestSvc> {
  stops.push(() => svc.stop());
  const res = await svc.api('/api/profiles', { method: 'POST', json: { name: 'notifier', runtime: 'general', model: MODEL, tools: ['@notify'] } });
  expect(res.status, await res.text()).toBe(201);
  return svc;
}

const bearer = (svc: TestSvc, path: string, token: string, method = 'GET') => svc.api(path, { method, key: token, ...(method === 'POST' ? { json: {} } : {}) });

/** Waits until `token` is refused for having expired: any token minted before it with the same lifetime has too. */
async function expiredBy(svc: TestSvc, token: string): Promise<void> {
  await vi.waitFor(
    async () => {
      const res = await bearer(svc, '/api/whoami', token);
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: 'invalid or expired run token' });
    },
    { timeout: 20_000, interval: 100 },
  );
}

/** A run whose model answers (with a `notify` call) only once the run's first token has expired; read to its end. */
async function runPastItsFirstToken(svc: TestSvc, hold: string) {
  const res = await svc.api('/api/runs', { method: 'POST', json: { profile: 'notifier', prompt: `HOLD ${hold} CALL_TOOL notify {"subject":"${hold}","message":"still here"}` } });
  expect(res.status).toBe(202);
  const { runId } = (await res.json()) as { runId: string };
  // the model was asked: the run's token was minted before this
  await fake.when(() => fake.requests.some((r) => JSON.stringify(r.body ?? {}).includes(`HOLD ${hold}`)));
  await expiredBy(svc, await mintRunToken(KEY, { tenantId: 'default', runId: 'clock' }, TTL_S));
  fake.release(hold);
  const events = (await readSse(await svc.api(`/api/runs/${runId}/stream`))).map((f) => f.event);
  return { runId, events };
}

async function outlivesItsToken(svc: TestSvc, hold: string): Promise<void> {
  const { runId, events } = await runPastItsFirstToken(svc, hold);
  const result = events.find((e) => e.type === 'tool_result');
  expect(result, JSON.stringify(events)).toMatchObject({ toolName: 'notify', isError: false });
  expect(JSON.stringify(result)).toMatch(/notification \S+: /);
  expect(JSON.stringify(events)).not.toContain('expired run token');
  expect(events.filter(isTerminalEvent)).toEqual([expect.objectContaining({ type: 'result', message: expect.stringContaining('TOOL-RESULT-SEEN: notification') })]);
  expect(await (await svc.api(`/api/runs/${runId}`)).json()).toMatchObject({ status: 'ok' });
  const notifications = (await (await svc.api('/api/notifications')).json()) as Array<{ subject: string; runId: string; event: string }>;
  expect(notifications.find((n) => n.subject === hold)).toMatchObject({ runId, event: 'notify' });
}

describe('a run that outlives its run token (all-in-one server)', () => {
  let svc: TestSvc;
  beforeAll(async () => {
    svc = await started(await startTestSvc({ ...common(), DATABASE_URL: await database() }, 'all'));
  });

  it('still calls its conductor after its first token expired, and ends with its result', async () => {
    await outlivesItsToken(svc, 'allinone');
  });

  it('renews the valid token of a running run, and refuses an expired or forged token, another credential and an ended run', async () => {
    const { runId } = (await (await svc.api('/api/runs', { method: 'POST', json: { profile: 'notifier', prompt: 'HOLD renewal hello' } })).json()) as { runId: string };
    await fake.when(() => fake.requests.some((r) => JSON.stringify(r.body ?? {}).includes('HOLD renewal')));
    const renewed = await bearer(svc, '/api/runs/self/token', await mintRunToken(KEY, { tenantId: 'default', runId }, 600), 'POST');
    expect(renewed.status).toBe(200);
    const { runToken, expiresAt } = (await renewed.json()) as { runToken: string; expiresAt: string };
    expect(Date.parse(expiresAt)).toBeGreaterThan(Date.now());
    expect(await (await bearer(svc, '/api/whoami', runToken)).json()).toMatchObject({ tenantId: 'default', authKind: 'run_token', subject: `run:${runId}` });
    fake.release('renewal');
    await readSse(await svc.api(`/api/runs/${runId}/stream`));

    const expired = await mintRunToken(KEY, { tenantId: 'default', runId }, TTL_S);
    await expiredBy(svc, expired);
    const refused = await bearer(svc, '/api/runs/self/token', expired, 'POST');
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({ error: 'invalid or expired run token' });

    const forged = await mintRunToken(new TextEncoder().encode('another-secret-0123456789abcdefgh'), { tenantId: 'default', runId }, 600);
    const forgedAnswer = await bearer(svc, '/api/runs/self/token', forged, 'POST');
    expect(forgedAnswer.status).toBe(401);
    expect(await forgedAnswer.json()).toEqual({ error: 'invalid or expired run token' });

    const withKey = await svc.api('/api/runs/self/token', { method: 'POST', json: {} });
    expect(withKey.status).toBe(403);
    expect((await withKey.json()).error).toMatch(/run's own token/);

    const ended = await bearer(svc, '/api/runs/self/token', await mintRunToken(KEY, { tenantId: 'default', runId }, 600), 'POST');
    expect(ended.status).toBe(409);
    expect(await ended.json()).toEqual({ error: `run ${runId} is ok, not running: its token is not renewed` });
  });
});

describe('a run that outlives its run token (conductor and runner apart, over HTTP)', () => {
  let conductor: TestSvc;
  beforeAll(async () => {
    const port = await freePort();
    const runner = await startTestSvc({ ...common(), SVC_INTERNAL_TOKEN: INTERNAL_TOKEN, SVC_CONDUCTOR_URL: `http://127.0.0.1:${port}` }, 'runner,worker');
    stops.push(() => runner.stop());
    conductor = await started(await startTestSvc({ ...common(), DATABASE_URL: await database(), SVC_INTERNAL_TOKEN: INTERNAL_TOKEN, SVC_RUNNERS: runner.url }, 'conductor', { port }));
  });

  it('still calls its conductor after its first token expired, and ends with its result', async () => {
    await outlivesItsToken(conductor, 'split');
  });
});
