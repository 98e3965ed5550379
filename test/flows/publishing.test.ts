import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as jose from 'jose';
import OpenAI from 'openai';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { withTenant } from '../../src/db/index.ts';
import { startAgentsHarness, type AgentsHarness } from '../support/agents.ts';
import { modelRequests } from '../support/fake-provider.ts';
import { startFakeIdp, type FakeIdp } from '../support/fake-idp.ts';
import { readSse } from '../support/sse.ts';

/**
 * Publishing over real HTTP (seed 000 "Publishing", issue 18): the publish routes with their defaults, bounds and
 * slug rules, agent keys (pk_…, shown once, revoked at once), and the chat gateway at /chat/{slug}: sync JSON, SSE,
 * a second turn in the same conversation, the per-key rate limit and the sync deadline.
 */
const PUBLIC = 'https://chat.example.test';
const WAIT = { timeout: 30_000, interval: 100 };
const db = () => h.svc.server.built.database!.db;
let h: AgentsHarness;
const api = (path: string, init: RequestInit & { json?: unknown; key?: string | null } = {}) => h.svc.api(path, init);
const chat = (slug: string, key: string | null, json: unknown, headers: Record<string, string> = {}) =>
  fetch(`${h.svc.url}/chat/${slug}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers },
    body: JSON.stringify(json),
  });

async function profile(name: string): Promise<void> {
  expect((await api('/api/profiles', { method: 'POST', json: { name, runtime: 'general', model: 'openai-compatible:gpt-4o' } })).status).toBe(201);
}
async function publish(name: string, body: unknown = {}) {
  const res = await api(`/api/profiles/${name}/publish`, { method: 'POST', json: body });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string; slug: string };
}
async function mintKey(name: string, label = 'site'): Promise<{ id: string; token: string }> {
  const res = await api(`/api/profiles/${name}/keys`, { method: 'POST', json: { label } });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string; token: string };
}

let dashboardIdp: FakeIdp;
beforeAll(async () => {
  // the dashboard's identity provider: org agents admit the tenant's signed-in sessions
  dashboardIdp = await startFakeIdp('https://dashboard-idp.example.test/');
  h = await startAgentsHarness({ SVC_CHAT_PUBLIC_URL: PUBLIC, SVC_JWT_ISSUER: dashboardIdp.issuer, SVC_JWT_JWKS_URL: dashboardIdp.jwksUrl });
}, 60_000);
afterAll(async () => {
  await h?.stop();
  await dashboardIdp?.close();
});

describe('publishing routes', () => {
  it('publishes with the seed defaults, a kebab-case slug and publicUrl from SVC_CHAT_PUBLIC_URL', async () => {
    await profile('Support_Bot');
    const res = await api('/api/profiles/Support_Bot/publish', { method: 'POST', json: {} });
    expect(res.status).toBe(201);
    const row = await res.json();
    expect(row).toEqual({
      id: expect.stringMatching(/^pub_/),
      tenantId: 'default',
      profileName: 'Support_Bot',
      slug: 'support-bot',
      visibility: 'private',
      authMode: 'api_key',
      allowedOrigins: [],
      rateLimitRpm: 60,
      syncMaxDurationSeconds: 60,
      conversationTtlDays: null,
      exposeToolEvents: false,
      approvals: 'deny',
      enabled: true,
      monthlyCostCapUsdCents: null,
      jwksUrl: null,
      jwtIssuer: null,
      publicUrl: `${PUBLIC}/chat/support-bot`,
    });
    expect(await (await api('/api/profiles/Support_Bot/published')).json()).toEqual(row);
    expect(await (await api('/api/published')).json()).toEqual({ total: 1, publishedAgents: [row] });
  });

  it('answers 409 for a profile already published and for a slug taken in the tenant', async () => {
    await profile('other');
    const again = await api('/api/profiles/Support_Bot/publish', { method: 'POST', json: {} });
    expect(again.status).toBe(409);
    const taken = await api('/api/profiles/other/publish', { method: 'POST', json: { slug: 'support-bot' } });
    expect(taken.status).toBe(409);
    expect(await taken.json()).toEqual({ error: 'slug support-bot is taken' });
  });

  it('refuses out-of-bounds settings and bad slugs with 400 naming the field', async () => {
    for (const body of [
      { syncMaxDurationSeconds: 0 },
      { syncMaxDurationSeconds: 271 },
      { rateLimitRpm: -1 },
      { rateLimitRpm: 1.5 },
      { slug: 'Not A Slug' },
      { slug: '-edge' },
      { visibility: 'everyone' },
      { allowedOrigins: ['not an origin'] },
      { conversationTtlDays: 0 },
      { unknownField: true },
    ]) {
      const res = await api('/api/profiles/other/publish', { method: 'POST', json: body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await res.json()).error, JSON.stringify(body)).toMatch(new RegExp(Object.keys(body)[0]));
    }
    expect((await api('/api/profiles/nobody/publish', { method: 'POST', json: {} })).status).toBe(404);
  });

  it('patches settings, enabled and the monthly cost cap, keeps the slug immutable, and unpublishes with 204', async () => {
    const res = await api('/api/profiles/Support_Bot/published', { method: 'PATCH', json: { enabled: false, monthlyCostCapUsdCents: 500, rateLimitRpm: 0 } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ slug: 'support-bot', enabled: false, monthlyCostCapUsdCents: 500, rateLimitRpm: 0, syncMaxDurationSeconds: 60 });
    expect((await api('/api/profiles/Support_Bot/published', { method: 'PATCH', json: { slug: 'support-bot' } })).status).toBe(200);
    const moved = await api('/api/profiles/Support_Bot/published', { method: 'PATCH', json: { slug: 'elsewhere' } });
    expect(moved.status).toBe(400);
    expect((await moved.json()).error).toMatch(/^slug: immutable/);
    expect((await api('/api/profiles/Support_Bot/published', { method: 'PATCH', json: { monthlyCostCapUsdCents: -1 } })).status).toBe(400);

    const del = await api('/api/profiles/Support_Bot/published', { method: 'DELETE' });
    expect(del.status).toBe(204);
    const gone = await api('/api/profiles/Support_Bot/published');
    expect(gone.status).toBe(404);
    expect((await gone.json()).error).toBe('not_published');
    expect((await api('/api/profiles/Support_Bot/published', { method: 'PATCH', json: { enabled: true } })).status).toBe(404);
    expect(await (await api('/api/published')).json()).toEqual({ total: 0, publishedAgents: [] });
    // the slug is free again once unpublished
    expect((await publish('Support_Bot')).slug).toBe('support-bot');
  });
});

describe('agent keys and the chat gateway', () => {
  it('publish → mint key → sync chat → streamed chat → second turn sees the first → revoke → 401 at once', async () => {
    await profile('helper');
    await publish('helper', { slug: 'helper' });
    const key = await mintKey('helper');
    expect(key).toMatchObject({ id: expect.stringMatching(/^akey_/), label: 'site', status: 'active', expiresAt: null, token: expect.stringMatching(/^pk_[A-Za-z0-9]{40}$/) });

    // the list shows metadata only
    const list = (await (await api('/api/profiles/helper/keys')).json()) as Array<Record<string, unknown>>;
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ id: key.id, status: 'active' });
    expect(JSON.stringify(list)).not.toContain(key.token);
    expect(Object.keys(list[0]).sort()).toEqual(['createdAt', 'expiresAt', 'id', 'label', 'prefix', 'publishedId', 'revokedAt', 'status']);

    // sync JSON
    const sync = await chat('helper', key.token, { message: 'remember the word heliotrope' });
    expect(sync.status).toBe(200);
    const first = (await sync.json()) as { conversationId: string; reply: string; usage: { inputTokens: number; outputTokens: number } };
    expect(first.reply).toContain('heliotrope');
    expect(first.conversationId).toMatch(/^conv_/);
    expect(first.usage.inputTokens + first.usage.outputTokens).toBeGreaterThan(0);

    // streamed, in the same conversation: the model sees the first turn
    const streamed = await chat('helper', key.token, { message: 'second turn please', conversationId: first.conversationId }, { accept: 'text/event-stream' });
    expect(streamed.status).toBe(200);
    expect(streamed.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const frames = await readRawSse(streamed);
    expect(frames[0]).toEqual({ event: 'conversation', data: { conversationId: first.conversationId, runId: expect.any(String) } });
    const deltas = frames.filter((f) => f.event === 'delta');
    expect(deltas.length).toBeGreaterThan(0);
    const ends = frames.filter((f) => f.event === 'done' || f.event === 'error');
    expect(ends).toHaveLength(1);
    expect(frames.at(-1)!.event).toBe('done');
    expect(frames.at(-1)!.data.reply).toContain('second turn please');
    expect(deltas.map((d) => d.data.text).join('')).toContain('second turn please');
    const secondRequest = modelRequests(h.fake).filter((r) => JSON.stringify(r.body).includes('second turn please')).at(-1)!;
    expect(JSON.stringify(secondRequest.body)).toContain('remember the word heliotrope');

    // the conversation so far, in order
    const history = await fetch(`${h.svc.url}/chat/helper/conversations/${first.conversationId}`, { headers: { authorization: `Bearer ${key.token}` } });
    expect(history.status).toBe(200);
    const { messages } = (await history.json()) as { messages: Array<{ role: string; content: string }> };
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(messages[0].content).toBe('remember the word heliotrope');
    expect(messages[2].content).toBe('second turn please');
    expect(messages[3].content).toBe(frames.at(-1)!.data.reply);

    // `"stream": true` streams too
    const byBody = await chat('helper', key.token, { message: 'stream by body', stream: true });
    expect((await readRawSse(byBody)).at(-1)!.event).toBe('done');

    // revoke: the very next request is refused
    expect((await api(`/api/profiles/helper/keys/${key.id}`, { method: 'DELETE' })).status).toBe(204);
    const refused = await chat('helper', key.token, { message: 'still there?' });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({ error: 'agent key revoked' });
    expect(((await (await api('/api/profiles/helper/keys')).json()) as Array<{ status: string }>)[0].status).toBe('revoked');
  });

  it('opens only with an agent key of that agent: tenant keys never open the gateway, agent keys never open /api or /v1', async () => {
    await profile('gated');
    await publish('gated');
    const key = await mintKey('gated');
    expect((await chat('gated', null, { message: 'hi' })).status).toBe(401);
    const tenantKey = await chat('gated', h.svc.key, { message: 'hi' });
    expect(tenantKey.status).toBe(401);
    expect((await tenantKey.json()).error).toMatch(/tenant API keys do not open the chat gateway/);
    expect((await api('/api/profiles', { key: key.token })).status).toBe(401);
    expect((await api('/v1/models', { key: key.token })).status).toBe(401);

    // a key of another published agent, and an unknown slug
    const other = await mintKey('helper', 'other');
    expect((await chat('gated', other.token, { message: 'hi' })).status).toBe(401);
    const unknown = await chat('nowhere', key.token, { message: 'hi' });
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error).toBe('not_published');

    // a disabled agent reads as unpublished; a conversation of another key is 404
    const conv = (await (await chat('gated', key.token, { message: 'hello' })).json()) as { conversationId: string };
    const second = await mintKey('gated', 'second');
    expect((await chat('gated', second.token, { message: 'peek', conversationId: conv.conversationId })).status).toBe(404);
    expect((await api('/api/profiles/gated/published', { method: 'PATCH', json: { enabled: false } })).status).toBe(200);
    expect((await chat('gated', key.token, { message: 'hi' })).status).toBe(404);

    // bad bodies are 400
    expect((await api('/api/profiles/gated/published', { method: 'PATCH', json: { enabled: true } })).status).toBe(200);
    for (const body of [{}, { message: '' }, { message: 3 }, { message: 'x', conversationId: '../etc' }]) {
      expect((await chat('gated', key.token, body)).status, JSON.stringify(body)).toBe(400);
    }
  });

  it('takes an expiresAt in the future only, and refuses a key once it has expired (listed as expired)', async () => {
    await profile('dated');
    await publish('dated');
    const past = await api('/api/profiles/dated/keys', { method: 'POST', json: { label: 'old', expiresAt: '2020-01-01T00:00:00Z' } });
    expect(past.status).toBe(400);
    expect((await past.json()).error).toBe('expiresAt: must be in the future');
    expect((await api('/api/profiles/dated/keys', { method: 'POST', json: { label: 'odd', expiresAt: 'next tuesday' } })).status).toBe(400);

    const soon = new Date(Date.now() + 3_600_000).toISOString();
    const res = await api('/api/profiles/dated/keys', { method: 'POST', json: { label: 'soon', expiresAt: soon } });
    expect(res.status).toBe(201);
    const key = (await res.json()) as { id: string; token: string; expiresAt: string; status: string };
    expect(key).toMatchObject({ expiresAt: soon, status: 'active' });
    expect((await chat('dated', key.token, { message: 'before it expires' })).status).toBe(200);
    // the hour passes
    await withTenant(db(), 'default', (tx) => sql`update agent_keys set expires_at = now() - interval '1 second' where id = ${key.id}`.execute(tx));
    const refused = await chat('dated', key.token, { message: 'after it expired' });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({ error: 'agent key expired' });
    expect(((await (await api('/api/profiles/dated/keys')).json()) as Array<{ id: string; status: string }>).find((k) => k.id === key.id)!.status).toBe('expired');
  });

  it('rateLimitRpm 2: the third request within the minute is 429 with Retry-After', async () => {
    await profile('limited');
    await publish('limited', { rateLimitRpm: 2 });
    const key = await mintKey('limited');
    expect((await chat('limited', key.token, { message: 'one' })).status).toBe(200);
    expect((await chat('limited', key.token, { message: 'two' })).status).toBe(200);
    const third = await chat('limited', key.token, { message: 'three' });
    expect(third.status).toBe(429);
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(modelRequests(h.fake).some((r) => JSON.stringify(r.body).includes('"three"'))).toBe(false);
  });

  it('answers 504 with the conversation and run when the reply outlasts syncMaxDurationSeconds, and cancels the run', async () => {
    await profile('slow');
    await publish('slow', { syncMaxDurationSeconds: 1 });
    const key = await mintKey('slow');
    const res = await chat('slow', key.token, { message: 'HOLD slowpoke' });
    expect(res.status).toBe(504);
    const body = (await res.json()) as { error: string; conversationId: string; runId: string };
    expect(body).toEqual({ error: expect.stringMatching(/no reply within 1s/), conversationId: expect.stringMatching(/^conv_/), runId: expect.any(String) });
    const run = (await (await api(`/api/runs/${body.runId}`)).json()) as { status: string };
    expect(run.status).toBe('cancelled');
    h.fake.release('slowpoke');
  });
});

describe('authMode jwt', () => {
  it('admits end-user JWTs verified against the agent\'s JWKS and issuer, and keeps each subject\'s conversations its own', async () => {
    const idp = await startFakeIdp('https://users.example.test/');
    try {
      await profile('members');
      const incomplete = await api('/api/profiles/members/publish', { method: 'POST', json: { authMode: 'jwt' } });
      expect(incomplete.status).toBe(400);
      expect((await incomplete.json()).error).toBe('authMode: jwt needs jwksUrl and jwtIssuer');
      const row = await publish('members', { authMode: 'jwt', jwksUrl: idp.jwksUrl, jwtIssuer: idp.issuer });
      expect(row).toMatchObject({ authMode: 'jwt', jwksUrl: idp.jwksUrl, jwtIssuer: idp.issuer });

      const alice = await idp.sign({ sub: 'alice' });
      const bob = await idp.sign({ sub: 'bob' });
      const res = await chat('members', alice, { message: 'alice here' });
      expect(res.status).toBe(200);
      const { conversationId } = (await res.json()) as { conversationId: string };
      expect((await chat('members', alice, { message: 'alice again', conversationId })).status).toBe(200);
      expect((await chat('members', bob, { message: 'bob peeks', conversationId })).status).toBe(404);
      expect((await fetch(`${h.svc.url}/chat/members/conversations/${conversationId}`, { headers: { authorization: `Bearer ${bob}` } })).status).toBe(404);

      expect((await chat('members', null, { message: 'nobody' })).status).toBe(401);
      const key = await mintKey('members');
      expect((await chat('members', key.token, { message: 'agent key' })).status).toBe(401);
      const other = await startFakeIdp('https://users.example.test/');
      try {
        const forged = await chat('members', await other.sign({ sub: 'alice' }), { message: 'forged' });
        expect(forged.status).toBe(401);
        expect((await forged.json()).error).toMatch(/^invalid end-user token/);
      } finally {
        await other.close();
      }
    } finally {
      await idp.close();
    }
  });
});

describe('JWKS documents under anonymous traffic', () => {
  /** An identity provider's JWKS endpoint that counts its hits: `fail` answers 500, otherwise one key `k1`. */
  async function jwksEndpoint() {
    const { publicKey } = await jose.generateKeyPair('RS256');
    const jwk = { ...(await jose.exportJWK(publicKey)), kid: 'k1', alg: 'RS256' };
    const state = { hits: 0, fail: true };
    const server = createServer((_req, res) => {
      state.hits++;
      if (state.fail) return void res.writeHead(500).end('down');
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`;
    const close = () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve())));
    return { url, state, close };
  }
  /** Bearers anyone can make: signed by a key of their own, with a key id the agent's JWKS lacks. */
  const strangers = async (n: number) => {
    const { privateKey } = await jose.generateKeyPair('RS256');
    return Promise.all(Array.from({ length: n }, (_, i) => new jose.SignJWT({ sub: `x${i}` }).setProtectedHeader({ alg: 'RS256', kid: `made-up-${i}` }).setIssuer('https://users.example.test/').setExpirationTime('1h').sign(privateKey)));
  };

  it('fetches a failing JWKS once per backoff window, however many anonymous bearers arrive', async () => {
    const idp = await jwksEndpoint();
    try {
      await profile('jwks-down');
      await publish('jwks-down', { authMode: 'jwt', jwksUrl: idp.url, jwtIssuer: 'https://users.example.test/' });
      for (const token of await strangers(20)) {
        const res = await chat('jwks-down', token, { message: 'hi' });
        expect(res.status).toBe(401);
        expect((await res.json()).error).toBe('invalid end-user token: the JWKS document answered HTTP 500');
      }
      expect(idp.state.hits).toBe(1);
    } finally {
      await idp.close();
    }
  });

  it('fetches a working JWKS once for tokens whose key ids it lacks', async () => {
    const idp = await jwksEndpoint();
    idp.state.fail = false;
    try {
      await profile('jwks-up');
      await publish('jwks-up', { authMode: 'jwt', jwksUrl: idp.url, jwtIssuer: 'https://users.example.test/' });
      for (const token of await strangers(20)) expect((await chat('jwks-up', token, { message: 'hi' })).status).toBe(401);
      expect(idp.state.hits).toBe(1);
    } finally {
      await idp.close();
    }
  });
});

describe('visibility org', () => {
  it('admits a signed-in dashboard session of the tenant, not one of another tenant, and still no tenant API key', async () => {
    await profile('internal');
    await publish('internal', { visibility: 'org' });
    const mine = await dashboardIdp.sign({ sub: 'dana', tenant_id: 'default', role: 'member' });
    const res = await chat('internal', mine, { message: 'from the dashboard' });
    expect(res.status).toBe(200);
    const { conversationId } = (await res.json()) as { conversationId: string };
    const other = await dashboardIdp.sign({ sub: 'dana', tenant_id: 'acme', role: 'owner' });
    expect((await chat('internal', other, { message: 'from acme' })).status).toBe(401);
    const colleague = await dashboardIdp.sign({ sub: 'eve', tenant_id: 'default', role: 'member' });
    expect((await chat('internal', colleague, { message: 'peek', conversationId })).status).toBe(404);
    expect((await chat('internal', h.svc.key, { message: 'tenant key' })).status).toBe(401);
    const key = await mintKey('internal');
    expect((await chat('internal', key.token, { message: 'agent key' })).status).toBe(200);
    // a private agent does not take sessions
    expect((await chat('helper', mine, { message: 'session on private' })).status).toBe(401);
  });
});

describe('visibility public', () => {
  it('chats without a credential, limited per client address, and keeps keyed conversations apart from anonymous ones', async () => {
    await profile('open');
    await publish('open', { visibility: 'public', rateLimitRpm: 2 });
    const first = await chat('open', null, { message: 'hello anyone' });
    expect(first.status).toBe(200);
    const { conversationId } = (await first.json()) as { conversationId: string };
    const again = await chat('open', null, { message: 'and again', conversationId });
    expect(again.status).toBe(200);
    const third = await chat('open', null, { message: 'one too many' });
    expect(third.status).toBe(429);
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);

    // an agent key, when sent, is verified and limited as itself; its conversations are not the anonymous ones
    const key = await mintKey('open');
    const keyed = await chat('open', key.token, { message: 'with a key' });
    expect(keyed.status).toBe(200);
    const keyedId = ((await keyed.json()) as { conversationId: string }).conversationId;
    const peek = await fetch(`${h.svc.url}/chat/open/conversations/${keyedId}`, { headers: { authorization: `Bearer ${key.token}` } });
    expect(peek.status).toBe(200);
    expect((await chat('open', 'pk_notARealKeyAtAll0000000000000000000000', { message: 'forged' })).status).toBe(401);
  });
});

describe('tool events in public chat streams', () => {
  it('hides tool_call and tool_result while exposeToolEvents is false and shows them once it is true', async () => {
    expect((await api('/api/profiles', { method: 'POST', json: { name: 'tooled', runtime: 'general', model: 'openai-compatible:gpt-4o', tools: ['@files'] } })).status).toBe(201);
    await publish('tooled');
    const key = await mintKey('tooled');
    const ask = async () => readRawSse(await chat('tooled', key.token, { message: 'CALL_TOOL fs_list {"path":"/work"}', stream: true }));

    const hidden = await ask();
    expect(hidden.at(-1)!.event).toBe('done');
    expect(hidden.at(-1)!.data.reply).toContain('TOOL-RESULT-SEEN');
    expect(hidden.map((f) => f.event).filter((e) => e.startsWith('tool_'))).toEqual([]);

    expect((await api('/api/profiles/tooled/published', { method: 'PATCH', json: { exposeToolEvents: true } })).status).toBe(200);
    const shown = await ask();
    expect(shown.map((f) => f.event).filter((e) => e.startsWith('tool_'))).toEqual(['tool_call', 'tool_result']);
    expect(shown.find((f) => f.event === 'tool_call')!.data).toMatchObject({ toolName: 'fs_list', input: { path: '/work' } });
    expect(shown.at(-1)!.event).toBe('done');
  });
});

describe('approvals of ask tools on the chat endpoint', () => {
  const asker = async (name: string) =>
    expect((await api('/api/profiles', { method: 'POST', json: { name, runtime: 'general', model: 'openai-compatible:gpt-4o', tools: ['@files'], permissions: { fs_write: 'ask' } } })).status).toBe(201);
  const write = (content: string) => `CALL_TOOL fs_write {"path":"/work/note.txt","content":"${content}"}`;

  it('denies an ask tool by default: the model reads that end users cannot approve it, and no run waits', async () => {
    await asker('chat-asker');
    const published = await (await api('/api/profiles/chat-asker/publish', { method: 'POST', json: {} })).json();
    expect(published.approvals).toBe('deny');
    const key = await mintKey('chat-asker');
    const frames = await readRawSse(await chat('chat-asker', key.token, { message: write('from an end user'), stream: true }));
    expect(frames.map((f) => f.event)).not.toContain('waiting');
    const done = frames.at(-1)!;
    expect(done.event).toBe('done');
    expect(done.data.reply).toContain('tool fs_write was not run');
    expect(done.data.reply).toContain('the end users of this published agent cannot approve tool calls');
    expect(done.data.reply).not.toContain('/api/runs/self/approvals');
    const runId = frames[0]!.data.runId as string;
    expect(await (await api(`/api/runs/${runId}/approvals`)).json()).toEqual([]);
    expect((await (await api(`/api/runs/${runId}`)).json()).status).toBe('ok');
  });

  it('with approvals "owner" the run waits for the owner, and the chat stream says so until the decision', async () => {
    await asker('chat-owner');
    const published = await (await api('/api/profiles/chat-owner/publish', { method: 'POST', json: { approvals: 'owner' } })).json();
    expect(published.approvals).toBe('owner');
    expect((await (await api('/api/profiles/chat-owner/published')).json()).approvals).toBe('owner');
    // the strict bodies refuse another value
    const bad = await api('/api/profiles/chat-owner/published', { method: 'PATCH', json: { approvals: 'end_user' } });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toContain('approvals: expected ("deny" | "owner")');
    const key = await mintKey('chat-owner');
    const streamed = chat('chat-owner', key.token, { message: write('owner approved'), stream: true }).then(readRawSse);
    const pending = await vi.waitFor(async () => {
      const list = (await (await api('/api/approvals?status=pending')).json()) as Array<{ id: string; runId: string; toolName: string }>;
      const hit = list.find((a) => a.toolName === 'fs_write');
      expect(hit).toBeDefined();
      return hit!;
    }, WAIT);
    expect((await (await api(`/api/runs/${pending.runId}`)).json()).status).toBe('waiting');
    expect((await api(`/api/runs/${pending.runId}/approvals/${pending.id}`, { method: 'POST', json: { decision: 'approve' } })).status).toBe(200);
    const frames = await streamed;
    expect(frames[0]!.event).toBe('conversation');
    expect(frames.filter((f) => f.event === 'done' || f.event === 'error')).toHaveLength(1);
    const waiting = frames.find((f) => f.event === 'waiting')!;
    expect(waiting.data).toMatchObject({ message: "waiting for the agent's owner to approve a call to fs_write", toolName: 'fs_write', approvalId: pending.id });
    expect(frames.find((f) => f.event === 'resumed')!.data).toMatchObject({ approvalId: pending.id, decision: 'approve' });
    expect(frames.findIndex((f) => f.event === 'waiting')).toBeLessThan(frames.findIndex((f) => f.event === 'resumed'));
    expect(frames.at(-1)!.event).toBe('done');
    expect(frames.at(-1)!.data.reply).toContain('TOOL-RESULT-SEEN');
    expect(frames.at(-1)!.data.reply).not.toContain('was not run');
    expect((await (await api(`/api/runs/${pending.runId}`)).json()).status).toBe('ok');
  });
});

describe('published-agent metrics', () => {
  it('counts exactly the runs, conversations and tokens of the agent\'s chats, in the seed\'s shape', async () => {
    await profile('metered');
    await publish('metered');
    const key = await mintKey('metered');
    type Reply = { conversationId: string; usage: { inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheCreateTokens: number } };
    const one = (await (await chat('metered', key.token, { message: 'first' })).json()) as Reply;
    const two = (await (await chat('metered', key.token, { message: 'second', conversationId: one.conversationId })).json()) as Reply;
    const three = (await (await chat('metered', key.token, { message: 'other conversation' })).json()) as Reply;
    const sum = (f: (u: Reply['usage']) => number) => [one, two, three].reduce((n, r) => n + f(r.usage), 0);

    const res = await api('/api/profiles/metered/metrics?window=1h');
    expect(res.status).toBe(200);
    const m = (await res.json()) as any;
    expect(m).toMatchObject({
      window: '1h',
      bucket: '5m',
      totals: { requests: 3, runs: 3, conversations: 2, costCents: 0, tokens: sum((u) => u.inputTokens + u.outputTokens) },
      tokens: { inputTokens: sum((u) => u.inputTokens), outputTokens: sum((u) => u.outputTokens), cacheReadTokens: sum((u) => u.cacheReadTokens), cacheCreateTokens: sum((u) => u.cacheCreateTokens) },
    });
    expect(m.totals.tokens).toBeGreaterThan(0);
    expect(new Date(m.until).getTime() - new Date(m.since).getTime()).toBe(3_600_000);
    expect(m.buckets).toHaveLength(12);
    expect(Object.keys(m.buckets[0]).sort()).toEqual(['costCents', 'end', 'failedRuns', 'ingressRequests', 'runningRuns', 'runs', 'sandboxSeconds', 'start', 'tokens']);
    expect(m.buckets.reduce((n: number, b: any) => n + b.runs, 0)).toBe(3);
    expect(m.buckets.reduce((n: number, b: any) => n + b.tokens, 0)).toBe(m.totals.tokens);
    expect(m.buckets.every((b: any) => b.failedRuns === 0 && b.sandboxSeconds === 0 && b.runningRuns === 0)).toBe(true);

    expect((await (await api('/api/profiles/metered/metrics?window=30d')).json()).buckets).toHaveLength(30);
    expect((await api('/api/profiles/metered/metrics?window=2y')).status).toBe(400);
    expect((await (await api('/api/profiles/other/metrics')).json()).error).toBe('not_published');
  });
});

describe('the tenant-wide time series', () => {
  it('GET /api/stats buckets every run of the tenant, with the gateway turns as ingressRequests', async () => {
    const owner = await h.otherOrg('statsco');
    const as = (path: string, init: RequestInit & { json?: unknown } = {}) => api(path, { ...init, key: owner });
    expect((await as('/api/profiles', { method: 'POST', json: { name: 'bot', runtime: 'general', model: 'openai-compatible:gpt-4o' } })).status).toBe(201);
    expect((await as('/api/profiles/bot/publish', { method: 'POST', json: { slug: 'statsco-bot' } })).status).toBe(201);
    const key = ((await (await as('/api/profiles/bot/keys', { method: 'POST', json: { label: 'k' } })).json()) as { token: string }).token;
    type Reply = { usage: { inputTokens: number; outputTokens: number } };
    const replies = [(await (await chat('statsco-bot', key, { message: 'a' })).json()) as Reply, (await (await chat('statsco-bot', key, { message: 'b' })).json()) as Reply];
    const run = (await (await as('/api/runs', { method: 'POST', json: { profile: 'bot', prompt: 'direct run' } })).json()) as { runId: string };
    await readSse(await as(`/api/runs/${run.runId}/stream`));
    const direct = (await (await as(`/api/runs/${run.runId}`)).json()) as { events: Array<{ type: string; usage?: { inputTokens: number; outputTokens: number } }> };
    const tokens =
      replies.reduce((n, r) => n + r.usage.inputTokens + r.usage.outputTokens, 0) +
      direct.events.filter((e) => e.type === 'usage').reduce((n, e) => n + e.usage!.inputTokens + e.usage!.outputTokens, 0);

    const res = await as('/api/stats?window=24h');
    expect(res.status).toBe(200);
    const stats = (await res.json()) as { window: string; bucket: string; buckets: Array<Record<string, number>> };
    expect(stats).toMatchObject({ window: '24h', bucket: '1h' });
    expect(stats.buckets).toHaveLength(24);
    const total = (f: string) => stats.buckets.reduce((n, b) => n + b[f], 0);
    expect({ runs: total('runs'), failedRuns: total('failedRuns'), runningRuns: total('runningRuns'), ingressRequests: total('ingressRequests'), tokens: total('tokens') }).toEqual({
      runs: 3,
      failedRuns: 0,
      runningRuns: 0,
      ingressRequests: 2,
      tokens,
    });
    expect((await as('/api/stats?window=1y')).status).toBe(400);
  });
});

describe('monthlyCostCapUsdCents', () => {
  it('answers 402 agent_cost_cap_reached once the cap is spent, before any run, and chats again when the cap is lifted', async () => {
    await profile('capped');
    await publish('capped');
    const key = await mintKey('capped');
    expect((await api('/api/profiles/capped/published', { method: 'PATCH', json: { monthlyCostCapUsdCents: 0 } })).status).toBe(200);
    const res = await chat('capped', key.token, { message: 'over the cap' });
    expect(res.status).toBe(402);
    expect(await res.json()).toMatchObject({ error: 'agent_cost_cap_reached', capUsdCents: 0 });
    expect(modelRequests(h.fake).some((r) => JSON.stringify(r.body).includes('over the cap'))).toBe(false);
    expect((await api('/api/profiles/capped/published', { method: 'PATCH', json: { monthlyCostCapUsdCents: null } })).status).toBe(200);
    expect((await chat('capped', key.token, { message: 'under no cap' })).status).toBe(200);
  });

  it('is reached by the priced cost of the agent\'s chats without a credit ledger (SVC_BILLING off): a one-cent cap stops it after a cent of usage', async () => {
    await profile('thrifty');
    await publish('thrifty');
    const key = await mintKey('thrifty');
    expect((await api('/api/profiles/thrifty/published', { method: 'PATCH', json: { monthlyCostCapUsdCents: 1 } })).status).toBe(200);
    // DELTAS 1000: a thousand output tokens, $0.01 at gpt-4o's $10 / M output, plus the prompt
    const spent = await chat('thrifty', key.token, { message: 'DELTAS 1000 spend a cent' });
    expect(spent.status).toBe(200);
    const { usage: u } = (await spent.json()) as { usage: { inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheCreateTokens: number } };
    expect(u.outputTokens).toBe(1000);
    const price = Math.round((u.inputTokens - u.cacheReadTokens - u.cacheCreateTokens) * 2.5 + u.cacheReadTokens * 1.25 + u.cacheCreateTokens * 2.5 + u.outputTokens * 10);
    expect(price).toBeGreaterThanOrEqual(10_000);

    const refused = await chat('thrifty', key.token, { message: 'one cent too far' });
    expect(refused.status).toBe(402);
    expect(await refused.json()).toMatchObject({ error: 'agent_cost_cap_reached', capUsdCents: 1, spentMicroUsd: price });
    expect(modelRequests(h.fake).some((r) => JSON.stringify(r.body).includes('one cent too far'))).toBe(false);
    // the OpenAI face is the same agent under the same cap
    const client = new OpenAI({ baseURL: `${h.svc.url}/chat/thrifty/v1`, apiKey: key.token, maxRetries: 0 });
    await expect(client.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'via the sdk' }] })).rejects.toMatchObject({
      status: 402,
      code: 'agent_cost_cap_reached',
      type: 'insufficient_quota',
    });
    // a cap above the spend lets it chat again
    expect((await api('/api/profiles/thrifty/published', { method: 'PATCH', json: { monthlyCostCapUsdCents: 100 } })).status).toBe(200);
    expect((await chat('thrifty', key.token, { message: 'under a higher cap' })).status).toBe(200);
  });
});

describe('conversationTtlDays', () => {
  it('purges a conversation idle longer than the TTL when the purge job runs, and keeps a fresh one', async () => {
    await profile('ephemeral');
    await publish('ephemeral', { conversationTtlDays: 1 });
    const key = await mintKey('ephemeral');
    const start = async (message: string) => ((await (await chat('ephemeral', key.token, { message })).json()) as { conversationId: string }).conversationId;
    const old = await start('an old chat');
    const fresh = await start('a fresh chat');
    const read = (id: string) => fetch(`${h.svc.url}/chat/ephemeral/conversations/${id}`, { headers: { authorization: `Bearer ${key.token}` } });
    expect((await read(old)).status).toBe(200);

    await withTenant(db(), 'default', (tx) => sql`update chat_conversations set last_active_at = now() - interval '2 days' where id = ${old}`.execute(tx));
    const job = (await sql<{ id: string }>`insert into pgboss.job (name, data) values ('publishing.conversations-purge', '{}') returning id`.execute(db())).rows[0].id;
    await vi.waitFor(async () => {
      const row = (await sql<{ state: string; output: { purged: number } }>`select state::text as state, output from pgboss.job where id = ${job}`.execute(db())).rows[0];
      expect(row.state).toBe('completed');
      expect(row.output.purged).toBe(1);
    }, WAIT);

    expect((await read(old)).status).toBe(404);
    expect((await chat('ephemeral', key.token, { message: 'still there?', conversationId: old })).status).toBe(404);
    expect((await read(fresh)).status).toBe(200);
  });
});

describe('CORS and slugs across tenants', () => {
  it('grants a preflight and a request from an allowed origin, refuses others with 403, and lets requests without Origin through', async () => {
    await profile('widget');
    await publish('widget', { allowedOrigins: ['https://shop.example'] });
    const key = await mintKey('widget');
    const preflight = (origin: string, path = '/chat/widget') =>
      fetch(`${h.svc.url}${path}`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' } });

    const ok = await preflight('https://shop.example');
    expect(ok.status).toBe(204);
    expect(ok.headers.get('access-control-allow-origin')).toBe('https://shop.example');
    expect(ok.headers.get('access-control-allow-methods')).toContain('POST');
    expect(ok.headers.get('access-control-allow-headers')).toContain('authorization');
    const okCompletions = await preflight('https://shop.example', '/chat/widget/v1/chat/completions');
    expect(okCompletions.status).toBe(204);

    const refused = await preflight('https://evil.example');
    expect(refused.status).toBe(403);
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();

    const fromShop = await chat('widget', key.token, { message: 'hi from the shop' }, { origin: 'https://shop.example' });
    expect(fromShop.status).toBe(200);
    expect(fromShop.headers.get('access-control-allow-origin')).toBe('https://shop.example');
    const fromEvil = await chat('widget', key.token, { message: 'hi from evil' }, { origin: 'https://evil.example' });
    expect(fromEvil.status).toBe(403);
    expect(fromEvil.headers.get('access-control-allow-origin')).toBeNull();
    expect(modelRequests(h.fake).some((r) => JSON.stringify(r.body).includes('hi from evil'))).toBe(false);
    expect((await chat('widget', key.token, { message: 'server side' })).status).toBe(200);

    // `*` allows any origin
    expect((await api('/api/profiles/widget/published', { method: 'PATCH', json: { allowedOrigins: ['*'] } })).status).toBe(200);
    expect((await preflight('https://anyone.example')).status).toBe(204);
    expect((await preflight('https://nowhere.example', '/chat/no-such-agent')).status).toBe(404);
  });

  it('keeps an active slug unique across tenants (409), since /chat/{slug} names no tenant', async () => {
    const otherKey = await h.otherOrg('acme');
    expect((await api('/api/profiles', { method: 'POST', key: otherKey, json: { name: 'helper', runtime: 'general', model: 'openai-compatible:gpt-4o' } })).status).toBe(201);
    const taken = await api('/api/profiles/helper/publish', { method: 'POST', key: otherKey, json: {} });
    expect(taken.status).toBe(409);
    const own = await api('/api/profiles/helper/publish', { method: 'POST', key: otherKey, json: { slug: 'acme-helper' } });
    expect(own.status).toBe(201);
    // the other tenant cannot see or manage this tenant's published agents
    expect(await (await api('/api/published', { key: otherKey })).json()).toMatchObject({ total: 1, publishedAgents: [{ slug: 'acme-helper', tenantId: 'acme' }] });
    expect((await api('/api/profiles/widget/published', { key: otherKey })).status).toBe(404);
    // an acme agent key opens acme's agent only
    const acmeKey = (await (await api('/api/profiles/helper/keys', { method: 'POST', key: otherKey, json: { label: 'x' } })).json()) as { token: string };
    expect((await chat('acme-helper', acmeKey.token, { message: 'hello acme' })).status).toBe(200);
    expect((await chat('widget', acmeKey.token, { message: 'hello widget' })).status).toBe(401);
  });
});

describe('the OpenAI Chat Completions face at /chat/{slug}/v1', () => {
  it('serves chat.completions.create from the official openai package, streamed and not, continuing a conversation by header', async () => {
    await profile('compat');
    await publish('compat');
    const key = await mintKey('compat');
    const client = new OpenAI({ baseURL: `${h.svc.url}/chat/compat/v1`, apiKey: key.token, maxRetries: 0 });

    const { data: completion, response } = await client.chat.completions
      .create({ model: 'anything', messages: [{ role: 'user', content: 'the secret is marmalade' }] })
      .withResponse();
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0].message).toMatchObject({ role: 'assistant', content: expect.stringContaining('marmalade') });
    expect(completion.choices[0].finish_reason).toBe('stop');
    expect(completion.usage!.total_tokens).toBeGreaterThan(0);
    const conversationId = response.headers.get('x-conversation-id')!;
    expect(conversationId).toMatch(/^conv_/);

    const stream = await client.chat.completions.create(
      { model: 'anything', stream: true, messages: [{ role: 'user', content: 'what did I say?' }] },
      { headers: { 'X-Conversation-Id': conversationId } },
    );
    let text = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(text).toContain('what did I say?');
    expect(finish).toBe('stop');
    // the agent kept the history: the model saw the first turn
    const seen = modelRequests(h.fake).filter((r) => JSON.stringify(r.body).includes('what did I say?')).at(-1)!;
    expect(JSON.stringify(seen.body)).toContain('the secret is marmalade');

    // the `user` field names the conversation too (for front ends that cannot set headers)
    const byUser = await client.chat.completions.create({ model: 'anything', user: conversationId, messages: [{ role: 'user', content: 'and by the user field?' }] }).withResponse();
    expect(byUser.response.headers.get('x-conversation-id')).toBe(conversationId);
    const seenByUser = modelRequests(h.fake).filter((r) => JSON.stringify(r.body).includes('and by the user field?')).at(-1)!;
    expect(JSON.stringify(seenByUser.body)).toContain('the secret is marmalade');

    // errors arrive in the OpenAI shape the SDK understands
    const bad = new OpenAI({ baseURL: `${h.svc.url}/chat/compat/v1`, apiKey: h.svc.key, maxRetries: 0 });
    await expect(bad.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'hi' }] })).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    await expect(client.chat.completions.create({ model: 'x', messages: [] })).rejects.toBeInstanceOf(OpenAI.BadRequestError);
  });
});

interface RawFrame {
  event: string;
  data: any;
}
/** Named SSE frames (`event:` + one JSON `data:` line) until the server closes the stream. */
async function readRawSse(res: Response): Promise<RawFrame[]> {
  expect(res.status).toBe(200);
  const text = await res.text();
  return text
    .split('\n\n')
    .filter((block) => block.includes('data:'))
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
      const data = block.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
      return { event, data: JSON.parse(data) };
    });
}
