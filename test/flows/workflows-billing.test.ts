import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { server } from '../support/backends.ts';
import { startTestSvc, type TestSvc } from '../support/svc.ts';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.ts';

/** A workflow node is an ordinary run: billing's credit gate refuses it (the node is in error, the run pauses) and charges it. */
let svc: TestSvc;
let fake: FakeProvider;
let cleanup: () => Promise<void>;
const WAIT = { timeout: 20_000, interval: 100 };

beforeAll(async () => {
  fake = await startFakeProvider();
  const db = await server.setup();
  cleanup = db.cleanup;
  svc = await startTestSvc({ DATABASE_URL: db.url, SVC_BILLING: 'ledger', AGENT_ORC_ADMIN_TENANT: 'default', OPENAI_COMPATIBLE_BASE_URL: fake.url, OPENAI_COMPATIBLE_API_KEY: 'x' }, 'all');
  expect((await svc.api('/api/profiles', { method: 'POST', json: { name: 'priced', runtime: 'general', model: 'openai-compatible:gpt-4o' } })).status).toBe(201);
});
afterAll(async () => {
  await svc?.stop();
  await fake?.close();
  await cleanup?.();
});

describe('workflows and the credit gate', () => {
  it('a node refused for lack of credit is in error and pauses the run; with credit, retry_node completes it and the node runs are charged', async () => {
    const res = await svc.api('/api/workflows/runs', { method: 'POST', json: { nodes: [{ id: 'x', profile: 'priced', prompt: 'hello' }, { id: 'y', profile: 'priced', prompt: 'then', dependsOn: ['x'] }] } });
    expect(res.status).toBe(202);
    const { id } = (await res.json()).workflowRun;
    const get = async () => (await (await svc.api(`/api/workflows/runs/${id}`)).json()).workflowRun;
    await vi.waitFor(async () => expect((await get()).statusLabel).toBe('paused'), WAIT);
    expect((await get()).nodes[0]).toMatchObject({ statusLabel: 'error', error: expect.stringMatching(/^its run could not start: Credits exhausted/) });
    expect(fake.requests).toEqual([]);

    expect((await svc.api('/api/billing/grants', { method: 'POST', json: { tenantId: 'default', amountMicroUSD: 5_000_000 } })).status).toBe(201);
    expect((await svc.api(`/api/workflows/runs/${id}/repair`, { method: 'POST', json: { action: 'retry_node', nodeId: 'x' } })).status).toBe(202);
    await vi.waitFor(async () => expect((await get()).statusLabel).toBe('completed'), WAIT);
    const runIds = (await get()).nodes.map((n: any) => n.runId);
    await vi.waitFor(async () => {
      const { events } = (await (await svc.api('/api/usage/events')).json()) as { events: any[] };
      for (const runId of runIds) expect(events.find((e) => e.runId === runId)).toMatchObject({ priced: true });
      // billing's runFinished subscriber charged them
      const wallet = (await (await svc.api('/api/billing/wallet')).json()) as { balanceMicroUSD: number };
      expect(wallet.balanceMicroUSD).toBeLessThan(5_000_000);
    }, WAIT);
  });
});
