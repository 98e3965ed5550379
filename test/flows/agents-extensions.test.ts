import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonb, withTenant } from '../../src/db/index.ts';
import { runEvent } from '../../src/contracts/run-event.ts';
import { createProviderKeys } from '../../src/modules/conductor/provider-keys/index.ts';
import { createSecretBox } from '../../src/shared/secret-box.ts';
import { SECRETS_KEY, startSdkSvc, type SdkSvc } from '../support/agents-sdk.ts';
import { backends, startOn } from '../support/backends.ts';

describe.each(backends)('extension routes /api/providers, /api/keys, /api/usage on $name', (backend) => {
  let t: SdkSvc;
  beforeAll(async () => {
    t = await startOn(backend, (url) => startSdkSvc({ DATABASE_URL: url, GROQ_API_KEY: 'gsk-SERVER-SECRET-1234' }));
  });
  afterAll(() => t?.stop());
  const api = (path: string, init: Parameters<SdkSvc['svc']['api']>[1] = {}) => t.svc.api(path, init);

  it('lists the supported providers and whether a key is set', async () => {
    const res = await api('/api/providers');
    expect(res.status).toBe(200);
    const { providers } = await res.json();
    expect(providers.map((p: { id: string }) => p.id)).toEqual(['openai', 'anthropic', 'google', 'bedrock', 'azure', 'mistral', 'xai', 'groq', 'openrouter', 'openai-compatible', 'demo']);
    expect(providers[0]).toEqual({ id: 'openai', name: 'OpenAI', keyRequired: true, keySet: false, keyHint: null, keyUpdatedAt: null, serverKeySet: false, keyVar: 'OPENAI_API_KEY', baseUrlVar: 'OPENAI_BASE_URL' });
    expect(providers.find((p: { id: string }) => p.id === 'google')).toMatchObject({ keyVar: 'GOOGLE_GENERATIVE_AI_API_KEY', baseUrlVar: 'GOOGLE_GENERATIVE_AI_BASE_URL', keySet: false });
    const groq = providers.find((p: { id: string }) => p.id === 'groq');
    expect(groq).toMatchObject({ keyRequired: true, keySet: false, serverKeySet: true, keyVar: 'GROQ_API_KEY', baseUrlVar: 'GROQ_BASE_URL' });
    expect(providers.filter((p: { serverKeySet: boolean }) => p.serverKeySet).map((p: { id: string }) => p.id)).toEqual(['groq']);
    expect(JSON.stringify(providers)).not.toContain('SERVER-SECRET');
    expect((await api('/api/providers/anthropic')).status).toBe(200);
    const unknown = await api('/api/providers/nope');
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error).toMatch(/unknown provider: nope/);
  });

  it('sets a provider key (admin only), shows only a hint, keeps it encrypted, and removes it', async () => {
    const secret = 'sk-test-PROVIDER-SECRET-9876';
    const member = await api('/api/providers/openai/key', { method: 'PUT', json: { key: secret }, key: t.keys.member });
    expect(member.status).toBe(403);
    const viewer = await api('/api/providers/openai/key', { method: 'DELETE', key: t.keys.viewer });
    expect(viewer.status).toBe(403);
    const set = await api('/api/providers/openai/key', { method: 'PUT', json: { key: secret } });
    expect(set.status).toBe(200);
    const body = await set.text();
    expect(body).not.toContain(secret);
    expect(JSON.parse(body)).toMatchObject({ id: 'openai', keySet: true, keyHint: '…9876', keyUpdatedAt: expect.any(String) });
    const listed = await (await api('/api/providers')).text();
    expect(listed).not.toContain(secret);
    expect((await (await api('/api/providers/openai', { key: t.keys.other })).json()).keySet).toBe(false);

    const db = t.svc.server.built.database!.db;
    const keys = createProviderKeys({ db, box: createSecretBox(SECRETS_KEY) });
    expect(await keys.get('default', 'openai')).toBe(secret);
    expect(await keys.get('other-org', 'openai')).toBeUndefined();
    const rows = await withTenant(db, 'default', (tx) => tx.selectFrom('provider_keys').selectAll().execute());
    expect(JSON.stringify(rows)).not.toContain('PROVIDER-SECRET');

    expect((await api('/api/providers/demo/key', { method: 'PUT', json: { key: 'x' } })).status).toBe(400);
    expect((await api('/api/providers/openai/key', { method: 'PUT', json: {} })).status).toBe(400);
    expect((await api('/api/providers/openai/key', { method: 'DELETE' })).status).toBe(204);
    expect((await (await api('/api/providers/openai')).json()).keySet).toBe(false);
    expect(await keys.get('default', 'openai')).toBeUndefined();
  });

  it("lists a provider's models with prices", async () => {
    const res = await api('/api/providers/anthropic/models');
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.provider).toBe('anthropic');
    expect(body.models).toContainEqual(expect.objectContaining({ id: 'claude-sonnet-4-5', model: 'anthropic:claude-sonnet-4-5', inputPerMTokUsd: 3, outputPerMTokUsd: 15 }));
  });

  it('creates a key whose secret is shown once and works, lists it without the secret, and revokes it', async () => {
    const created = await api('/api/keys', { method: 'POST', json: { name: 'ci' } });
    expect(created.status).toBe(201);
    const key = await created.json();
    expect(key).toMatchObject({ id: expect.any(String), name: 'ci', role: 'owner', status: 'active', secret: expect.stringMatching(/^ao_test_/) });
    const listed = await api('/api/keys');
    const text = await listed.text();
    expect(text).not.toContain(key.secret);
    expect(JSON.parse(text).keys.map((k: { id: string }) => k.id)).toContain(key.id);
    expect((await t.sdk(key.secret).files.list()).data).toBeDefined();
    expect((await api(`/api/keys/${key.id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await api('/api/whoami', { key: key.secret })).status).toBe(401);
    expect((await api('/api/keys', { method: 'POST', json: { name: 'v' }, key: t.keys.viewer })).status).toBe(403);
    expect((await api(`/api/keys/${key.id}`, { method: 'DELETE', key: t.keys.other })).status).toBe(404);
    expect((await api('/api/keys', { key: null })).status).toBe(401);
  });

  it('sums usage from run usage events with a cost, per tenant and time window', async () => {
    const db = t.svc.server.built.database!.db;
    const at = (iso: string) => ({ ...runEvent('usage'), ts: iso });
    const seed = (tenantId: string, runId: string, sessionModel: string, events: Array<Record<string, unknown>>) =>
      withTenant(db, tenantId, async (tx) => {
        await tx.insertInto('sessions').values({ id: `sess-${runId}`, tenant_id: tenantId, profile: 'p', runtime: 'general', runner_url: 'http://r', profile_snapshot: jsonb({ model: sessionModel }) }).execute();
        await tx.insertInto('runs').values({ id: runId, tenant_id: tenantId, session_id: `sess-${runId}`, profile: 'p', sub_task: jsonb({}), status: 'ok', owner_id: 'test' }).execute();
        await tx.insertInto('run_events').values(events.map((event, i) => ({ run_id: runId, seq: i + 1, tenant_id: tenantId, event: jsonb(event) }))).execute();
      });
    await seed('default', 'run_u1', 'openai:gpt-4o', [
      { ...at('2030-01-01T10:00:00Z'), usage: { inputTokens: 1000, outputTokens: 500, cacheReadTokens: 200 } },
      { ...runEvent('assistant', { message: 'not usage' }) },
      { ...at('2030-01-02T10:00:00Z'), usage: { inputTokens: 2000, outputTokens: 0 } },
    ]);
    await seed('default', 'run_u2', 'demo:demo', [{ ...at('2030-01-03T10:00:00Z'), model: 'anthropic/claude-sonnet-4-5-20250929', usage: { inputTokens: 100, outputTokens: 100 } }]);
    await seed('other-org', 'run_u3', 'openai:gpt-4o', [{ ...at('2030-01-01T10:00:00Z'), usage: { inputTokens: 999999, outputTokens: 1 } }]);

    const totals = await (await api('/api/usage')).json();
    // gpt-4o: (800 + 2000) × 2.5 + 200 × 1.25 + 500 × 10 = 12250 µ$; claude-sonnet-4-5: 100 × 3 + 100 × 15 = 1800 µ$.
    expect(totals).toMatchObject({ events: 3, inputTokens: 3100, outputTokens: 600, cacheReadTokens: 200, totalTokens: 3700, costMicroUsd: 14050, costUsd: 0.01405 });
    expect(totals.byModel).toEqual([
      expect.objectContaining({ model: 'anthropic/claude-sonnet-4-5-20250929', events: 1, costMicroUsd: 1800, priced: true }),
      expect.objectContaining({ model: 'openai:gpt-4o', events: 2, inputTokens: 3000, costMicroUsd: 12250, priced: true }),
    ]);
    const windowed = await (await api('/api/usage?since=2030-01-02T00:00:00Z&until=2030-01-03T00:00:00Z')).json();
    expect(windowed).toMatchObject({ events: 1, inputTokens: 2000, costMicroUsd: 5000, since: '2030-01-02T00:00:00.000Z' });

    const rows = await (await api('/api/usage/events?limit=2')).json();
    expect(rows).toMatchObject({ limit: 2, offset: 0, hasMore: true });
    expect(rows.events[0]).toEqual({
      runId: 'run_u2',
      sessionId: 'sess-run_u2',
      seq: 1,
      at: '2030-01-03T10:00:00.000Z',
      model: 'anthropic/claude-sonnet-4-5-20250929',
      inputTokens: 100,
      outputTokens: 100,
      cacheReadTokens: 0,
      cacheCreateTokens: 0,
      totalTokens: 200,
      costMicroUsd: 1800,
      costUsd: 0.0018,
      priced: true,
    });
    expect((await (await api('/api/usage/events?offset=2')).json()).events).toHaveLength(1);
    expect((await (await api('/api/usage', { key: t.keys.other })).json()).inputTokens).toBe(999999);
    expect((await api('/api/usage?since=yesterday')).status).toBe(400);
  });
});
