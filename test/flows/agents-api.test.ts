import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { backends, startOn } from '../support/backends.ts';
import { FAKE_MODEL, startAgentsHarness, type AgentsHarness } from '../support/agents.ts';

/**
 * The /v1 agents and sessions resources through the real `openai` 7.15.0 package: CRUD, resolved defaults, cursor
 * pagination, tenancy (404 across organisations), roles (403) and the rate limit (429 with Retry-After).
 */
describe.each(backends)('agents and sessions on $name', (backend) => {
  let h: AgentsHarness;

  beforeAll(async () => {
    h = await startOn(backend, (url) => startAgentsHarness({}, { databaseUrl: url }));
  });
  afterAll(() => h?.stop());

  it('creates an agent with every default resolved, and reads it back', async () => {
    const agent = await h.client.beta.agents.create({ model: 'svc/demo/echo' });
    expect(agent).toEqual({
      id: expect.stringMatching(/^agent_/),
      object: 'agent',
      created_at: expect.any(Number),
      updated_at: expect.any(Number),
      instructions: null,
      metadata: {},
      model: 'svc/demo/echo',
      multi_agent: { enabled: false, max_concurrent_subagents: null },
      name: null,
      reasoning: { effort: 'medium', summary: null },
      service_tier: 'auto',
      text: { format: { type: 'text' }, verbosity: 'medium' },
      tools: [],
    });
    expect(await h.client.beta.agents.retrieve(agent.id)).toEqual(agent);
  });

  it('persists tools with their defaults and echoes non-secret MCP headers', async () => {
    const agent = await h.client.beta.agents.create({
      model: FAKE_MODEL,
      multi_agent: { enabled: true },
      tools: [
        { type: 'function', name: 'lookup', description: 'Look something up', parameters: { type: 'object', properties: {} } },
        { type: 'programmatic_tool_calling' },
        { type: 'mcp', server_label: 'docs', transport: { type: 'http', server_url: 'https://mcp.example.com/mcp', headers: { 'X-Team': 'blue' } } },
      ],
    });
    expect(agent.multi_agent).toEqual({ enabled: true, max_concurrent_subagents: 6 });
    expect(agent.tools).toEqual([
      { type: 'function', name: 'lookup', description: 'Look something up', parameters: { type: 'object', properties: {} }, defer_loading: false },
      { type: 'programmatic_tool_calling', enabled: true },
      {
        type: 'mcp', server_label: 'docs', transport: { type: 'http', server_url: 'https://mcp.example.com/mcp', headers: { 'X-Team': 'blue' } },
        allowed_tools: null, connection_origin: 'service', credential_id: null, request_metadata: {}, required: false,
      },
    ]);
  });

  it('updates only the fields sent', async () => {
    const agent = await h.client.beta.agents.create({ model: 'svc/demo/echo', name: 'before', instructions: 'Be brief.', metadata: { team: 'a' } });
    const renamed = await h.client.beta.agents.update(agent.id, { name: 'after' });
    expect(renamed).toMatchObject({ name: 'after', instructions: 'Be brief.', metadata: { team: 'a' }, model: 'svc/demo/echo' });
    const cleared = await h.client.beta.agents.update(agent.id, { metadata: null, instructions: null });
    expect(cleared).toMatchObject({ name: 'after', instructions: null, metadata: {} });
    expect(cleared.updated_at).toBeGreaterThanOrEqual(agent.updated_at);
  });

  it('refuses any other model form with 400 naming `model`', async () => {
    for (const model of ['gpt-4o', 'svc/nowhere/x', 'nowhere/large', 'svc/demo', 'nowhere:gpt-4o']) {
      const err = await h.client.beta.agents.create({ model }).catch((e) => e);
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      expect(err.param).toBe('model');
    }
    // every provider of the general runtime, in either spelling (printed `provider/model` on /v1)
    for (const model of ['mistral/large', 'openai:gpt-4o']) expect((await h.client.beta.agents.create({ model })).model).toBeTruthy();
    const agent = await h.client.beta.agents.create({ model: 'openai/gpt-4o' });
    expect((await h.client.beta.agents.update(agent.id, { model: 'nope' }).catch((e) => e)).status).toBe(400);
  });

  it('lists agents newest first and auto-paginates across pages', async () => {
    const created: Array<{ id: string }> = [];
    for (let i = 0; i < 5; i++) created.push(await h.client.beta.agents.create({ model: 'svc/demo/echo', name: `page-${i}` }));
    const seen: string[] = [];
    for await (const a of h.client.beta.agents.list({ limit: 2 })) seen.push(a.id);
    const ours = seen.filter((id) => created.some((c) => c.id === id));
    expect(ours).toEqual(created.map((c) => c.id).reverse());
    expect(new Set(seen).size).toBe(seen.length);
    const asc: string[] = [];
    for await (const a of h.client.beta.agents.list({ limit: 2, order: 'asc' })) asc.push(a.id);
    expect(asc).toEqual([...seen].reverse());
  });

  it('deletes an agent and then 404s it', async () => {
    const agent = await h.client.beta.agents.create({ model: 'svc/demo/echo' });
    expect(await h.client.beta.agents.delete(agent.id)).toEqual({ id: agent.id, deleted: true, object: 'agent.deleted' });
    const err = await h.client.beta.agents.retrieve(agent.id).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('creates, reads, relabels, lists and deletes sessions', async () => {
    const agent = await h.client.beta.agents.create({ model: 'svc/demo/echo', name: 'sessions' });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await h.client.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'none' }, metadata: { n: String(i) } })).id);
    const session = await h.client.beta.agents.sessions.retrieve(ids[0]);
    expect(session).toMatchObject({ id: ids[0], object: 'agent.session', status: 'idle', metadata: { n: '0' }, environment: { type: 'none' }, vault_ids: [], required_actions: [], error: null, usage: null });
    expect(session.agent).toMatchObject({ id: agent.id, name: 'sessions', model: 'svc/demo/echo' });
    expect((await h.client.beta.agents.sessions.update(ids[0], { metadata: { label: 'x' } })).metadata).toEqual({ label: 'x' });
    const listed: string[] = [];
    for await (const s of h.client.beta.agents.sessions.list({ limit: 2, agent_id: agent.id })) listed.push(s.id);
    expect(listed).toEqual([...ids].reverse());
    expect(await h.client.beta.agents.sessions.delete(ids[0])).toEqual({ id: ids[0], deleted: true, object: 'agent.session.deleted' });
    expect((await h.client.beta.agents.sessions.retrieve(ids[0]).catch((e) => e)).status).toBe(404);
    expect((await h.client.beta.agents.retrieve(agent.id)).id).toBe(agent.id); // deleting a session keeps its agent
  });

  it('creates a session from an inline agent, which needs a model', async () => {
    const session = await h.client.beta.agents.sessions.create({ agent: { model: 'svc/demo/echo', instructions: 'Inline.' }, environment: { type: 'none' } });
    expect(session.agent).toMatchObject({ id: expect.stringMatching(/^agent_/), name: null, instructions: 'Inline.', model: 'svc/demo/echo' });
    const err = await h.client.beta.agents.sessions.create({ agent: { instructions: 'no model' }, environment: { type: 'none' } }).catch((e) => e);
    expect([err.status, err.param]).toEqual([400, 'agent.model']);
  });

  it("answers 404 for another organisation's agents and sessions", async () => {
    const other = h.clientFor(await h.otherOrg(`org-${backend.name}`));
    const agent = await h.client.beta.agents.create({ model: 'svc/demo/echo' });
    const session = await h.client.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'none' } });
    for (const call of [
      () => other.beta.agents.retrieve(agent.id),
      () => other.beta.agents.update(agent.id, { name: 'stolen' }),
      () => other.beta.agents.delete(agent.id),
      () => other.beta.agents.sessions.retrieve(session.id),
      () => other.beta.agents.sessions.events.create(session.id, { events: [{ type: 'agent.session.input.cancel' }] }),
      () => other.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'none' } }),
    ]) {
      expect((await call().catch((e) => e)).status).toBe(404);
    }
    const theirs: string[] = [];
    for await (const a of other.beta.agents.list()) theirs.push(a.id);
    expect(theirs).not.toContain(agent.id);
  });

  it('refuses a viewer that tries to create an agent with 403', async () => {
    const viewer = h.clientFor(await h.mintKey('default', 'viewer'));
    const err = await viewer.beta.agents.create({ model: 'svc/demo/echo' }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect((await viewer.beta.agents.list()).data).toBeInstanceOf(Array);
  });
});

describe('the agents API rate limit', () => {
  let h: AgentsHarness;
  beforeAll(async () => {
    h = await startAgentsHarness({ SVC_RATE_LIMIT_PER_KEY: '3' });
  });
  afterAll(async () => h?.stop());

  it('answers 429 rate_limit_exceeded with Retry-After once a key exceeds its limit', async () => {
    for (let i = 0; i < 3; i++) await h.client.beta.agents.list();
    const err = await h.client.beta.agents.list().catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err.code).toBe('rate_limit_exceeded');
    const seconds = Number(err.headers.get('retry-after'));
    expect(seconds).toBeGreaterThanOrEqual(1);
    expect(err.error.message).toBe(`Rate limit reached. Retry after ${seconds} seconds.`);
  });
});
