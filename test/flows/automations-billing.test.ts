import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { server } from '../support/backends.ts';
import { startTestSvc, type TestSvc } from '../support/svc.ts';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.ts';

/** A firing is an ordinary run, so billing's credit gate applies: a tenant out of credit gets its automation disabled. */
let svc: TestSvc;
let fake: FakeProvider;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  fake = await startFakeProvider();
  const db = await server.setup();
  cleanup = db.cleanup;
  svc = await startTestSvc({ DATABASE_URL: db.url, SVC_BILLING: 'ledger', OPENAI_COMPATIBLE_BASE_URL: fake.url, OPENAI_COMPATIBLE_API_KEY: 'x' }, 'all');
  expect((await svc.api('/api/profiles', { method: 'POST', json: { name: 'priced', runtime: 'general', model: 'openai-compatible:gpt-4o' } })).status).toBe(201);
});
afterAll(async () => {
  await svc?.stop();
  await fake?.close();
  await cleanup?.();
});

describe('automations and the credit gate', () => {
  it('a firing refused for lack of credit fails with the gate\'s reason and disables the automation at once', async () => {
    const created = await (await svc.api('/api/automations', { method: 'POST', json: { name: 'broke', profile: 'priced', prompt: 'hello', cron: '0 9 * * *' } })).json();
    expect(created.status).toBe('active');
    const res = await svc.api(`/api/automations/${created.id}/run`, { method: 'POST' });
    expect(res.status).toBe(202);
    expect(await res.json()).toMatchObject({ automationId: created.id, outcome: 'failed', sessionId: null, error: expect.stringMatching(/^Credits exhausted/) });
    expect(await (await svc.api(`/api/automations/${created.id}`)).json()).toMatchObject({ status: 'disabled', nextRunAt: null, consecutiveFailures: 1 });
    expect(fake.requests).toEqual([]);
    expect((await svc.api(`/api/automations/${created.id}`, { method: 'PUT', json: { prompt: 'again' } })).status).toBe(409);
  });
});
