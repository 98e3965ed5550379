import { lookup } from 'node:dns/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { POLICY_NOTE, refusedAddress } from '../../src/shared/egress/index.ts';
import { REFUSED_FORMS } from '../support/address-forms.ts';
import { collect, FAKE_MODEL, isTurnEnd, startAgentsHarness, type AgentsHarness } from '../support/agents.ts';

/**
 * SVC_PRIVATE_ADDRESSES=deny (the default outside dev): every URL a tenant gives the server to call (a published
 * agent's `jwksUrl`, webhook endpoints, the MCP servers of profiles, kits and /v1 agents) is refused when saved if
 * it names an internal address in any spelling (400 naming the address and the policy), and a name that passes there
 * but resolves to an internal address is refused when the server connects: nothing ever reaches it.
 */
let h: AgentsHarness;
/** A receiver on every interface of this machine, counting what reaches it (a JWKS document, a webhook). */
let receiver: Server;
let port: number;
const hits: string[] = [];
/** This machine's own name: it resolves to one of its addresses (loopback or private), never a public one here. */
const ownName = hostname();

beforeAll(async () => {
  receiver = createServer((req, res) => {
    hits.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"keys":[]}');
  });
  await new Promise<void>((resolve) => receiver.listen(0, '0.0.0.0', resolve));
  port = (receiver.address() as AddressInfo).port;
  h = await startAgentsHarness({ SVC_PRIVATE_ADDRESSES: 'deny' });
});
afterAll(async () => {
  await h?.stop();
  receiver?.closeAllConnections();
  await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
});

const api = (path: string, init: RequestInit & { json?: unknown } = {}) => h.svc.api(path, init);
const errorOf = async (res: Response) => ({ status: res.status, error: ((await res.json()) as { error: string }).error });
/** A JWT-shaped bearer anyone can make up: the server must not fetch anything per such request. */
const madeUp = `${Buffer.from(JSON.stringify({ alg: 'RS256', kid: 'any' })).toString('base64url')}.${Buffer.from('{"sub":"x"}').toString('base64url')}.c2ln`;
const chat = (slug: string) => fetch(`${h.svc.url}/chat/${slug}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${madeUp}` }, body: '{"message":"hi"}' });

describe('the address policy with deny', () => {
  it('precondition: this machine resolves its own name to an address the policy refuses', async () => {
    const addresses = await lookup(ownName, { all: true });
    expect(addresses.some((a) => refusedAddress(a.address))).toBe(true);
  });

  it(`refuses each of ${REFUSED_FORMS.length} internal address forms when saved, on every surface, naming the address and the policy`, async () => {
    expect((await api('/api/profiles', { method: 'POST', json: { name: 'table', runtime: 'general', model: 'demo:echo' } })).status).toBe(201);
    for (const { url, names } of REFUSED_FORMS) {
      const jwks = await errorOf(await api('/api/profiles/table/publish', { method: 'POST', json: { authMode: 'jwt', jwksUrl: url, jwtIssuer: 'https://idp.example/' } }));
      expect(jwks, url).toEqual({ status: 400, error: expect.stringMatching(new RegExp(`^jwksUrl: .*${names.source}.*; ${escape(POLICY_NOTE)}$`)) });
      const hook = await errorOf(await api('/api/notifications/settings', { method: 'PUT', json: { webhooks: [{ url }] } }));
      expect(hook, url).toEqual({ status: 400, error: expect.stringMatching(new RegExp(`^webhooks\\.0\\.url: .*${names.source}`)) });
      const endpoint = await errorOf(await api('/api/webhooks', { method: 'POST', json: { url, events: ['*'] } }));
      expect(endpoint, url).toEqual({ status: 400, error: expect.stringMatching(new RegExp(`^url: .*${names.source}`)) });
      const mcp = await errorOf(await api('/api/profiles', { method: 'POST', json: { name: 'inside', runtime: 'general', model: 'demo:echo', mcpServers: [{ name: 'docs', url }] } }));
      expect(mcp, url).toEqual({ status: 400, error: expect.stringMatching(new RegExp(`^mcpServers\\.0\\.url: .*${names.source}`)) });
      const agent = h.client.beta.agents.create({ model: FAKE_MODEL, tools: [{ type: 'mcp', server_label: 'docs', transport: { type: 'http', server_url: url } }] } as never);
      await expect(agent, url).rejects.toMatchObject({ status: 400, param: 'tools[0].transport.server_url', message: expect.stringMatching(names) });
    }
    // nothing was stored: no publication, no webhook, no profile
    expect((await api('/api/profiles/table/published')).status).toBe(404);
    expect(((await (await api('/api/notifications/settings')).json()) as { webhooks: unknown[] }).webhooks).toEqual([]);
    expect(await (await api('/api/webhooks')).json()).toEqual([]);
    expect((await api('/api/profiles/inside')).status).toBe(404);
  });

  it("refuses an MCP credential whose OAuth token endpoint, which the server calls, is on an internal address", async () => {
    const vault = await h.client.beta.agents.vaults.create();
    for (const endpoint of ['https://127.0.0.1/token', 'https://[::ffff:169.254.169.254]/token', 'https://[64:ff9b::a00:1]/token', 'https://auth.localhost/token']) {
      const refresh = { client_id: 'c', refresh_token: 'r', token_endpoint: endpoint, token_endpoint_auth: { type: 'none' } };
      const created = h.client.beta.agents.vaults.credentials.create(vault.id, { name: 'oauth', auth: { type: 'mcp_oauth', mcp_server_url: 'https://mcp.example.com/mcp', access_token: 'a', refresh } } as never);
      await expect(created, endpoint).rejects.toMatchObject({ status: 400, message: expect.stringContaining(POLICY_NOTE) });
    }
  });

  it('refuses a jwksUrl changed to an internal address (PATCH), and keeps the one it had', async () => {
    expect((await api('/api/profiles', { method: 'POST', json: { name: 'patched', runtime: 'general', model: 'demo:echo' } })).status).toBe(201);
    expect((await api('/api/profiles/patched/publish', { method: 'POST', json: { authMode: 'jwt', jwksUrl: 'https://idp.example/jwks.json', jwtIssuer: 'https://idp.example/' } })).status).toBe(201);
    const res = await errorOf(await api('/api/profiles/patched/published', { method: 'PATCH', json: { jwksUrl: 'http://[::ffff:169.254.169.254]/latest' } }));
    expect(res).toEqual({ status: 400, error: `jwksUrl: ::ffff:a9fe:a9fe is 169.254.169.254 (IPv4-mapped), a link-local address; ${POLICY_NOTE}` });
    expect(((await (await api('/api/profiles/patched/published')).json()) as { jwksUrl: string }).jwksUrl).toBe('https://idp.example/jwks.json');
  });

  it('never fetches a jwksUrl whose name resolves to an internal address, however many anonymous bearers arrive', async () => {
    expect((await api('/api/profiles', { method: 'POST', json: { name: 'members', runtime: 'general', model: 'demo:echo' } })).status).toBe(201);
    const published = await api('/api/profiles/members/publish', { method: 'POST', json: { authMode: 'jwt', jwksUrl: `http://${ownName}:${port}/jwks.json`, jwtIssuer: 'https://idp.example/' } });
    expect(published.status).toBe(201); // a name passes as written: it is judged when the server connects
    for (let i = 0; i < 5; i++) {
      const res = await errorOf(await chat('members'));
      expect(res.status).toBe(401);
      expect(res.error).toMatch(new RegExp(`^invalid end-user token: ${ownName} resolves to \\S+, an? [a-z- ]+ address; ${escape(POLICY_NOTE)}$`));
    }
    expect(hits.filter((p) => p === '/jwks.json')).toEqual([]);
  });

  it('never delivers to a webhook whose name resolves to an internal address, and fails the delivery at once with the reason', async () => {
    const url = `http://${ownName}:${port}/hook`;
    const put = await api('/api/notifications/settings', { method: 'PUT', json: { email: { enabled: false }, webhooks: [{ url }] } });
    expect(put.status).toBe(200);
    const created = (await (await api('/api/notifications', { method: 'POST', json: { channel: 'inbox', message: 'hello' } })).json()) as { id: string };
    await vi.waitFor(
      async () => {
        const n = await (await api(`/api/notifications/${created.id}`)).json();
        expect(n.deliveries).toEqual([expect.objectContaining({ target: url, status: 'failed', attempts: 1, lastError: expect.stringMatching(new RegExp(`^${ownName} resolves to .*; ${escape(POLICY_NOTE)}$`)) })]);
      },
      { timeout: 30_000, interval: 100 },
    );
    expect(hits.filter((p) => p === '/hook')).toEqual([]);
  });

  it('fails a run whose profile MCP server resolves to an internal address before anything starts', async () => {
    const created = await api('/api/profiles', { method: 'POST', json: { name: 'mcp-named', runtime: 'general', model: 'demo:echo', mcpServers: [{ name: 'docs', url: `http://${ownName}:9/mcp` }] } });
    expect(created.status).toBe(201);
    const run = await errorOf(await api('/api/runs', { method: 'POST', json: { profile: 'mcp-named', prompt: 'hello' } }));
    expect(run.status).toBe(400);
    expect(run.error).toMatch(new RegExp(`^MCP server "docs": ${ownName} resolves to \\S+, an? [a-z- ]+ address; ${escape(POLICY_NOTE)}$`));
    const runs = (await (await api('/api/runs')).json()) as Array<{ profile: string }>;
    expect(runs.filter((r) => r.profile === 'mcp-named')).toEqual([]);
  });

  it('fails the /v1 turn whose agent MCP server resolves to an internal address, without calling the model', async () => {
    const agent = await h.client.beta.agents.create({ model: FAKE_MODEL, tools: [{ type: 'mcp', server_label: 'docs', transport: { type: 'http', server_url: `http://${ownName}:9/mcp` } }] } as never);
    const session = await h.client.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'none' } });
    const events = (await collect(await h.client.beta.agents.sessions.stream(session.id, { input: 'hello from the turn' } as never), isTurnEnd)) as unknown as Array<{ type: string; turn?: { error?: { message: string } } }>;
    const failed = events.at(-1)!;
    expect(failed.type).toBe('agent.session.turn.failed');
    expect(failed.turn!.error!.message).toContain(`MCP server "docs": ${ownName} resolves to`);
    expect(h.fake.requests.filter((r) => JSON.stringify(r.body ?? '').includes('hello from the turn'))).toEqual([]);
  });
});

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
