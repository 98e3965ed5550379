import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, FAKE_MODEL, isTurnEnd, startAgentsHarness, type AgentsHarness } from '../support/agents.ts';
import { isInternalAddress } from '../../src/modules/conductor/notifications/webhook-address.ts';

/**
 * SVC_PRIVATE_MCP=deny (the default outside dev): tenants' remote MCP servers, in profiles and /v1 agents, are kept off
 * loopback, private and link-local addresses like notification webhooks: a URL naming such an address is a 400 when
 * it is saved, and one whose name resolves to such an address fails the run (or the /v1 turn) before it starts.
 */
let h: AgentsHarness;
/** This machine's own name: it resolves to one of its addresses (loopback or private), never a public one here. */
const ownName = hostname();

beforeAll(async () => {
  h = await startAgentsHarness({ SVC_PRIVATE_MCP: 'deny' });
});
afterAll(() => h?.stop());

const REASON = `${ownName} resolves to the internal address`;

describe('tenant MCP servers on internal addresses (SVC_PRIVATE_MCP=deny)', () => {
  it('precondition: this machine resolves its own name to an internal address', async () => {
    const addresses = await lookup(ownName, { all: true });
    expect(addresses.some((a) => isInternalAddress(a.address))).toBe(true);
  });

  it('refuses a profile naming an internal address (400), and fails a run whose MCP server resolves to one', async () => {
    for (const url of ['http://127.0.0.1:9/mcp', 'http://169.254.169.254/latest', 'http://localhost:9/mcp', 'http://[::1]:9/mcp', 'http://10.1.2.3/mcp']) {
      const res = await h.svc.api('/api/profiles', { method: 'POST', json: { name: 'mcp-inside', runtime: 'general', model: 'demo:echo', mcpServers: [{ name: 'docs', url }] } });
      expect(res.status).toBe(400);
      expect((await res.json()).error).toMatch(/^mcpServers\.0\.url: \S+ is an internal address; MCP servers go to public addresses$/);
    }
    const created = await h.svc.api('/api/profiles', { method: 'POST', json: { name: 'mcp-named', runtime: 'general', model: 'demo:echo', mcpServers: [{ name: 'docs', url: `http://${ownName}:9/mcp` }] } });
    expect(created.status).toBe(201);
    const replaced = await h.svc.api('/api/profiles/mcp-named', { method: 'PUT', json: { name: 'mcp-named', runtime: 'general', model: 'demo:echo', mcpServers: [{ name: 'docs', url: 'http://192.168.1.1/mcp' }] } });
    expect(replaced.status).toBe(400);
    const run = await h.svc.api('/api/runs', { method: 'POST', json: { profile: 'mcp-named', prompt: 'hello' } });
    expect(run.status).toBe(400);
    const { error } = await run.json();
    expect(error).toContain(`MCP server "docs": ${REASON}`);
    expect(error).toContain('SVC_PRIVATE_MCP=allow');
    // nothing was started for it
    const runs = (await (await h.svc.api('/api/runs', { method: 'GET' })).json()) as Array<{ profile: string }>;
    expect(runs.filter((r) => r.profile === 'mcp-named')).toEqual([]);
  });

  it('refuses a /v1 agent naming an internal address (400 on its server_url), and fails the turn whose MCP server resolves to one', async () => {
    const inside = h.client.beta.agents.create({ model: FAKE_MODEL, tools: [{ type: 'mcp', server_label: 'docs', transport: { type: 'http', server_url: 'http://127.0.0.1:9/mcp' } }] } as never);
    await expect(inside).rejects.toMatchObject({ status: 400, param: 'tools[0].transport.server_url', message: expect.stringContaining('127.0.0.1 is an internal address; MCP servers go to public addresses') });
    const agent = await h.client.beta.agents.create({ model: FAKE_MODEL, tools: [{ type: 'mcp', server_label: 'docs', transport: { type: 'http', server_url: `http://${ownName}:9/mcp` } }] } as never);
    const update = h.client.beta.agents.update(agent.id, { tools: [{ type: 'mcp', server_label: 'docs', transport: { type: 'http', server_url: 'http://[fe80::1]/mcp' } }] } as never);
    await expect(update).rejects.toMatchObject({ status: 400, param: 'tools[0].transport.server_url' });

    const session = await h.client.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'none' } });
    const events = (await collect(await h.client.beta.agents.sessions.stream(session.id, { input: 'hello' } as never), isTurnEnd)) as unknown as Array<{ type: string; turn?: { error?: { message: string } } }>;
    const failed = events.at(-1)!;
    expect(failed.type).toBe('agent.session.turn.failed');
    expect(failed.turn!.error!.message).toContain(`MCP server "docs": ${REASON}`);
    // the model was never called for it
    expect(h.fake.requests.filter((r) => JSON.stringify(r.body ?? '').includes('hello'))).toEqual([]);
  });
});
