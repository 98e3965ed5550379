import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startAgentsHarness, type AgentsHarness } from '../support/agents.ts';

/**
 * The chat gateway under `SVC_BILLING=ledger`: the tenant's credit gate answers every chat (402 with billing's body,
 * before any run), and once credit is granted the agent's metrics count what its runs were charged.
 */
const WAIT = { timeout: 30_000, interval: 100 };

describe('publishing with the credit ledger', () => {
  let h: AgentsHarness;
  beforeAll(async () => {
    h = await startAgentsHarness({ SVC_BILLING: 'ledger' });
  }, 60_000);
  afterAll(async () => {
    await h?.stop();
  });

  it('refuses chats with 402 while the tenant has no credit, then charges them and counts the cost in the metrics', async () => {
    expect((await h.svc.api('/api/profiles', { method: 'POST', json: { name: 'paid', runtime: 'general', model: 'openai-compatible:gpt-4o' } })).status).toBe(201);
    expect((await h.svc.api('/api/profiles/paid/publish', { method: 'POST', json: {} })).status).toBe(201);
    const { token } = (await (await h.svc.api('/api/profiles/paid/keys', { method: 'POST', json: { label: 'k' } })).json()) as { token: string };
    const chat = (message: string) =>
      fetch(`${h.svc.url}/chat/paid`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ message }) });

    const broke = await chat('no credit yet');
    expect(broke.status).toBe(402);
    expect(await broke.json()).toEqual({ error: 'credits_exhausted', scope: 'tenant', balance_micro_usd: 0, message: expect.stringMatching(/credits exhausted/i) });
    // a streamed request is refused before any stream opens, with the same body
    const streamed = await fetch(`${h.svc.url}/chat/paid`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'text/event-stream' }, body: JSON.stringify({ message: 'no credit, streamed' }) });
    expect(streamed.status).toBe(402);
    expect(streamed.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await streamed.json()).toMatchObject({ error: 'credits_exhausted', scope: 'tenant' });
    // the OpenAI face: the official package sees a 402 carrying the gate's code, as /v1 answers it
    const client = new OpenAI({ baseURL: `${h.svc.url}/chat/paid/v1`, apiKey: token, maxRetries: 0 });
    await expect(client.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'no credit, sdk' }] })).rejects.toMatchObject({
      status: 402,
      code: 'credits_exhausted',
      type: 'insufficient_quota',
    });
    expect(h.fake.requests.filter((r) => JSON.stringify(r.body ?? '').includes('no credit'))).toEqual([]);

    expect((await h.svc.api('/api/billing/grants', { method: 'POST', json: { tenantId: 'default', amountMicroUSD: 5_000_000 } })).status).toBe(201);
    expect((await chat('now with credit')).status).toBe(200);
    // the charge lands when billing's runFinished subscriber has run
    await vi.waitFor(async () => {
      const m = (await (await h.svc.api('/api/profiles/paid/metrics')).json()) as { totals: { runs: number; costCents: number } };
      expect(m.totals.runs).toBe(1);
      expect(m.totals.costCents).toBeGreaterThan(0);
    }, WAIT);
    const wallet = (await (await h.svc.api('/api/billing/wallet')).json()) as { balanceMicroUSD: number };
    const m = (await (await h.svc.api('/api/profiles/paid/metrics')).json()) as { totals: { costCents: number } };
    expect(m.totals.costCents).toBe(Math.round((5_000_000 - wallet.balanceMicroUSD) / 100) / 100);
  });
});
