import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAKE_MODEL, isTurnEnd, reader, startAgentsHarness, textOf, type AgentsHarness } from '../support/agents.ts';
import { startMcpServer, type TestMcpServer } from '../support/mcp-server.ts';
import { stdioMcpServer } from '../support/stdio-mcp.ts';

/**
 * Permission policies of a /v1 agent's MCP servers (`agent_toolset.mcp_toolsets`, Claude Managed Agents'
 * `mcp_toolset`), driven by the official `openai` client against the real server, a real MCP server and the fake model
 * provider: an `always_ask` server's call waits as a `tool_approval` required action, reaches the server only once
 * approved, never when denied or disabled; a server without an entry follows `agent_toolset.default_config`.
 */
describe('/v1 MCP servers under permission policies', () => {
  let h: AgentsHarness;
  let docs: TestMcpServer;
  // the fields are svc's extension: the SDK's types do not name them, its requests carry them as given
  const agents = () => h.client.beta.agents as any;
  const sessions = () => h.client.beta.agents.sessions as any;
  const mcpTool = () => ({ type: 'mcp', server_label: 'docs', transport: { type: 'http', server_url: docs.url } });
  const echo = (message: string) => `CALL_TOOL docs__echo {"message":"${message}"}`;
  const echoed = (message: string) => docs.calls.filter((c) => (c.args as { message?: string }).message === message);

  /** A session of `agent`, its event stream open, and a message sent. */
  async function ask(agent: { agent_id: string } | { agent: unknown }, message: string) {
    const session = await sessions().create({ ...agent, environment: { type: 'none' } });
    const stream = reader<any>(await sessions().events.stream(session.id));
    await sessions().events.create(session.id, { events: [{ type: 'agent.session.input.message', input: [{ role: 'user', content: [{ type: 'input_text', text: message }] }] }] });
    return { session, stream };
  }
  async function waitingAction(stream: ReturnType<typeof reader<any>>) {
    const seen = await stream.until((e) => isTurnEnd(e) || (e.type === 'agent.session.requires_action' && e.session.required_actions.some((r: any) => r.type === 'tool_approval')));
    expect(isTurnEnd(seen.at(-1)), 'the turn ended without asking').toBe(false);
    return seen.at(-1).session.required_actions.find((r: any) => r.type === 'tool_approval');
  }

  beforeAll(async () => {
    docs = await startMcpServer({ name: 'docs' });
    h = await startAgentsHarness();
  });
  afterAll(async () => {
    await h?.stop();
    await docs?.close();
  });

  it('keeps an MCP toolset on the agent with its defaults, and refuses a server name no mcp tool has', async () => {
    const agent = await agents().create({ model: FAKE_MODEL, tools: [mcpTool()], agent_toolset: { mcp_toolsets: [{ mcp_server_name: 'docs', configs: [{ name: 'fail', enabled: false }] }] } });
    const toolset = {
      default_config: { permission_policy: { type: 'always_allow' } },
      configs: [],
      // Claude's default for an MCP toolset: always_ask
      mcp_toolsets: [{ mcp_server_name: 'docs', default_config: { permission_policy: { type: 'always_ask' } }, configs: [{ name: 'fail', enabled: false, permission_policy: null }] }],
    };
    expect(agent.agent_toolset).toEqual(toolset);
    expect((await agents().retrieve(agent.id)).agent_toolset).toEqual(toolset);

    const refused = async (p: Promise<unknown>) => {
      const err: any = await p.catch((e: any) => e);
      expect(err.status).toBe(400);
      expect(err.error.param).toMatch(/agent_toolset\.mcp_toolsets\[0\]\.mcp_server_name$/);
      return err.error.message as string;
    };
    expect(await refused(agents().create({ model: FAKE_MODEL, tools: [mcpTool()], agent_toolset: { mcp_toolsets: [{ mcp_server_name: 'dcos' }] } }))).toMatch(
      /^agent_toolset\.mcp_toolsets\[0\]\.mcp_server_name: dcos is not the server_label of one of the agent's mcp tools \(its mcp tools are docs\)/,
    );
    expect(await refused(agents().create({ model: FAKE_MODEL, agent_toolset: { mcp_toolsets: [{ mcp_server_name: 'docs' }] } }))).toContain('it has no mcp tools');
    // an update that drops the server the toolset names
    expect(await refused(agents().update(agent.id, { tools: [] }))).toMatch(/^agent_toolset\.mcp_toolsets\[0\]\.mcp_server_name: docs/);
    // a session's override, checked against the session's tools
    expect(await refused(sessions().create({ agent_id: agent.id, agent: { agent_toolset: { mcp_toolsets: [{ mcp_server_name: 'other' }] } }, environment: { type: 'none' } }))).toMatch(
      /^agent\.agent_toolset\.mcp_toolsets\[0\]\.mcp_server_name: other/,
    );
  });

  it('asks before an always_ask MCP call: approved, the server gets the call', async () => {
    const agent = await agents().create({ model: FAKE_MODEL, tools: [mcpTool()], agent_toolset: { mcp_toolsets: [{ mcp_server_name: 'docs' }] } });
    const { session, stream } = await ask({ agent_id: agent.id }, echo('approved mcp'));
    const action = await waitingAction(stream);
    expect(action).toEqual({ type: 'tool_approval', id: expect.stringMatching(/^apr_/), tool_name: 'docs__echo', arguments: expect.any(String), turn_id: expect.stringMatching(/^turn_/) });
    expect(JSON.parse(action.arguments)).toEqual({ message: 'approved mcp' });
    expect((await sessions().retrieve(session.id)).required_actions).toEqual([action]);
    expect(echoed('approved mcp')).toEqual([]);

    await sessions().events.create(session.id, { events: [{ type: 'agent.session.input.tool_approval', id: action.id, approve: true }] });
    const rest = await stream.until(isTurnEnd);
    expect(rest.at(-1).type).toBe('agent.session.turn.completed');
    expect(textOf(rest)).toContain('TOOL-RESULT-SEEN: echo: approved mcp');
    await stream.close();
    expect(echoed('approved mcp')).toHaveLength(1);
    expect((await sessions().retrieve(session.id)).required_actions).toEqual([]);
  });

  it('never calls the server when the client denies: the model reads the reason', async () => {
    const agent = await agents().create({ model: FAKE_MODEL, tools: [mcpTool()], agent_toolset: { mcp_toolsets: [{ mcp_server_name: 'docs', default_config: { permission_policy: { type: 'always_ask' } } }] } });
    const { session, stream } = await ask({ agent_id: agent.id }, echo('denied mcp'));
    const action = await waitingAction(stream);
    await sessions().events.create(session.id, { events: [{ type: 'tool_approval', id: action.id, approve: false, message: 'not that server' }] });
    const rest = await stream.until(isTurnEnd);
    expect(rest.at(-1).type).toBe('agent.session.turn.completed');
    expect(textOf(rest)).toContain('tool docs__echo was not run: a person denied it: not that server');
    await stream.close();
    expect(echoed('denied mcp')).toEqual([]);
  });

  it('refuses a disabled MCP tool without asking, and lets an always_allow one through', async () => {
    const agent = await agents().create({
      model: FAKE_MODEL,
      tools: [mcpTool()],
      agent_toolset: {
        default_config: { permission_policy: { type: 'always_ask' } },
        mcp_toolsets: [{ mcp_server_name: 'docs', default_config: { permission_policy: { type: 'always_allow' } }, configs: [{ name: 'fail', enabled: false }] }],
      },
    });
    const before = docs.calls.filter((c) => c.name === 'fail').length;
    const disabled = await ask({ agent_id: agent.id }, 'CALL_TOOL docs__fail {}');
    const events = await disabled.stream.until(isTurnEnd);
    expect(events.some((e) => e.type === 'agent.session.requires_action')).toBe(false);
    expect(textOf(events)).toContain('tool docs__fail denied by the permission policy');
    expect(textOf(events)).toContain('(mcp:docs/fail: deny)');
    await disabled.stream.close();
    expect(docs.calls.filter((c) => c.name === 'fail')).toHaveLength(before);

    // the server's own always_allow beats the agent's always_ask default
    const allowed = await ask({ agent_id: agent.id }, echo('allowed mcp'));
    const done = await allowed.stream.until(isTurnEnd);
    expect(done.some((e) => e.type === 'agent.session.requires_action')).toBe(false);
    expect(textOf(done)).toContain('TOOL-RESULT-SEEN: echo: allowed mcp');
    await allowed.stream.close();
  });

  it('asks before a stdio MCP server call in a hosted environment, and runs it once approved', async () => {
    // a minimal stdio MCP server for the system's node, seeded into the workspace
    const server = stdioMcpServer({
      name: 'local',
      tools: [{ name: 'shout', description: 'Upper-cases a word', properties: { word: { type: 'string' } } }],
      call: `answer('shouted ' + msg.params.arguments.word.toUpperCase());`,
    });
    const session = await sessions().create({
      agent: {
        model: FAKE_MODEL,
        tools: [{ type: 'mcp', server_label: 'local', transport: { type: 'stdio', command: 'node', args: ['shout.js'], cwd: '/workspace' } }],
        agent_toolset: { mcp_toolsets: [{ mcp_server_name: 'local', configs: [{ name: 'shout', permission_policy: { type: 'always_ask' } }] }] },
      },
      environment: { type: 'openai_hosted', files: [{ type: 'inline', path: '/workspace/shout.js', data: Buffer.from(server).toString('base64') }] },
    });
    const stream = reader<any>(await sessions().events.stream(session.id));
    await sessions().events.create(session.id, { events: [{ type: 'agent.session.input.message', input: [{ role: 'user', content: [{ type: 'input_text', text: 'CALL_TOOL local__shout {"word":"quiet"}' }] }] }] });
    const action = await waitingAction(stream);
    expect(action.tool_name).toBe('local__shout');
    await sessions().events.create(session.id, { events: [{ type: 'tool_approval', id: action.id, approve: true }] });
    const rest = await stream.until(isTurnEnd);
    expect(rest.at(-1).type).toBe('agent.session.turn.completed');
    expect(textOf(rest)).toContain('TOOL-RESULT-SEEN: shouted QUIET');
    await stream.close();
  });

  it('asks for an MCP server without an entry when default_config is always_ask, also in a session override', async () => {
    // a session of its own agent: the default covers every tool, MCP servers' included
    const { session, stream } = await ask({ agent: { model: FAKE_MODEL, tools: [mcpTool()], agent_toolset: { default_config: { permission_policy: { type: 'always_ask' } } } } }, echo('default ask'));
    const action = await waitingAction(stream);
    expect(action.tool_name).toBe('docs__echo');
    expect(echoed('default ask')).toEqual([]);
    await sessions().events.create(session.id, { events: [{ type: 'tool_approval', id: action.id, approve: true }] });
    const rest = await stream.until(isTurnEnd);
    expect(textOf(rest)).toContain('TOOL-RESULT-SEEN: echo: default ask');
    await stream.close();
    expect(echoed('default ask')).toHaveLength(1);
  });
});
