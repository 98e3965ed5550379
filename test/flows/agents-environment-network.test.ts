import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { collect, FAKE_MODEL, startAgentsHarness, textOf, type AgentsHarness } from '../support/agents.ts';
import { listen, type Listening } from '../support/listen.ts';
import { stdioMcpServer } from '../support/stdio-mcp.ts';

/**
 * A hosted environment's `network` reaches its session's sandbox: with `access: enabled` (the default) the session's
 * commands and stdio MCP servers share the runner's network, with `disabled` they have only a loopback device of their
 * own; `restricted` (and a domain list, which only it would use) is refused at creation, never pretended. What a
 * command can reach is shown against an HTTP server the test starts on the runner's 127.0.0.1.
 */
describe("a hosted environment's network", () => {
  let h: AgentsHarness;
  let target: Listening;
  const hits: string[] = [];
  beforeAll(async () => {
    target = await listen((req) => {
      hits.push(new URL(req.url).pathname);
      return new Response('reached');
    });
    h = await startAgentsHarness();
  });
  afterAll(async () => {
    await h?.stop();
    await target?.close();
  });

  const sessions = () => h.client.beta.agents.sessions;
  const b64 = (text: string) => Buffer.from(text).toString('base64');
  const turn = async (sessionId: string, input: string) => {
    const events = await collect(sessions().stream(sessionId, { input }));
    expect(events.at(-2)!.type).toBe('agent.session.turn.completed');
    return textOf(events);
  };
  /** A command that fetches `path` from the test's server, or says it could not. */
  const fetchCommand = (path: string) =>
    `CALL_TOOL run_command ${JSON.stringify({ command: 'sh', args: ['-c', `curl -s --max-time 10 ${target.url}${path} || echo unreachable`] })}`;
  const session = async (environment: Record<string, unknown>, tools: unknown[] = []) =>
    sessions().create({ agent: { model: FAKE_MODEL, tools: tools as never }, environment: { type: 'openai_hosted', ...environment } });

  it('lets the commands of an environment with network (the default) reach the runner’s network, and those without it not', async () => {
    const open = await session({});
    expect(open.environment).toMatchObject({ network: { access: 'enabled', allowed_domains: [] } });
    expect(await turn(open.id, fetchCommand('/default'))).toBe('TOOL-RESULT-SEEN: reached');

    const closed = await session({ network: { access: 'disabled' } });
    expect(await turn(closed.id, fetchCommand('/disabled'))).toBe('TOOL-RESULT-SEEN: unreachable\n');
    // a template's policy holds for the sessions made from it
    const template = await h.client.beta.agents.environments.templates.create({ network: { access: 'disabled' } });
    const fromTemplate = await session({ environment_template_id: template.id });
    expect(fromTemplate.environment).toMatchObject({ network: { access: 'disabled' } });
    expect(await turn(fromTemplate.id, fetchCommand('/template'))).toBe('TOOL-RESULT-SEEN: unreachable\n');

    expect(hits).toEqual(['/default']);
  });

  it("holds for every turn of the session and for its subagents, which work in the session's sandbox", async () => {
    const agent = await h.client.beta.agents.create({ model: FAKE_MODEL, multi_agent: { enabled: true } });
    /**
     * A turn whose model calls a subagent tool with `args`; the command line in them is the subagent's prompt (spelled
     * \u0043ALL_TOOL in the JSON, so only the outer line is a directive). Answers the subagent's id and text.
     */
    const delegate = async (sessionId: string, tool: string, args: Record<string, string>) => {
      const line = `CALL_TOOL ${tool} ${JSON.stringify(args).replaceAll('CALL_TOOL', '\\u0043ALL_TOOL')}`;
      const events = (await collect(sessions().stream(sessionId, { input: line }))) as Array<{ type: string; turn_id?: string | null; turn?: { subagent_id: string | null } }>;
      expect(events.at(-2)!.type).toBe('agent.session.turn.completed');
      const sub = events.find((e) => e.type === 'agent.session.turn.created' && e.turn!.subagent_id !== null)!;
      return { id: sub.turn!.subagent_id!, text: textOf(events.filter((e) => e.turn_id === sub.turn_id)) };
    };
    for (const access of ['enabled', 'disabled'] as const) {
      const s = await sessions().create({ agent_id: agent.id, environment: { type: 'openai_hosted', network: { access } } });
      const seen = access === 'enabled' ? 'TOOL-RESULT-SEEN: reached' : 'TOOL-RESULT-SEEN: unreachable\n';
      expect(await turn(s.id, fetchCommand(`/${access}/turn-1`))).toBe(seen);
      expect(await turn(s.id, fetchCommand(`/${access}/turn-2`))).toBe(seen);
      // a subagent's runner session is made with its first turn, beside the session's; a message resumes it
      const sub = await delegate(s.id, 'spawn_subagent', { task: fetchCommand(`/${access}/subagent`) });
      expect(sub.text).toBe(seen);
      const again = await delegate(s.id, 'send_subagent_input', { subagent_id: sub.id, message: fetchCommand(`/${access}/subagent-again`) });
      expect(again).toEqual({ id: sub.id, text: seen });
      expect(await turn(s.id, fetchCommand(`/${access}/turn-5`))).toBe(seen);
    }
    const paths = ['turn-1', 'turn-2', 'subagent', 'subagent-again', 'turn-5'];
    expect(hits.filter((p) => p.startsWith('/enabled/') || p.startsWith('/disabled/'))).toEqual(paths.map((p) => `/enabled/${p}`));
  });

  it('gives the stdio MCP servers of the session the same network as its commands', async () => {
    // a stdio MCP server whose one tool fetches a URL
    const server = stdioMcpServer({
      name: 'net',
      tools: [{ name: 'get', description: 'GET a URL', properties: { url: { type: 'string' } } }],
      call: `fetch(msg.params.arguments.url).then((r) => r.text()).then(answer, () => answer('unreachable'));`,
    });
    const tool = { type: 'mcp', server_label: 'net', transport: { type: 'stdio', command: 'node', args: ['net.js'], cwd: '/workspace' } };
    const files = [{ type: 'inline', path: '/workspace/net.js', data: b64(server) }];
    const call = (path: string) => `CALL_TOOL net__get ${JSON.stringify({ url: `${target.url}${path}` })}`;
    const open = await session({ files }, [tool]);
    expect(await turn(open.id, call('/mcp-enabled'))).toBe('TOOL-RESULT-SEEN: reached');
    const closed = await session({ files, network: { access: 'disabled' } }, [tool]);
    expect(await turn(closed.id, call('/mcp-disabled'))).toBe('TOOL-RESULT-SEEN: unreachable');
    expect(hits.filter((p) => p.startsWith('/mcp'))).toEqual(['/mcp-enabled']);
  });

  it('refuses restricted access and a domain list at creation (400 naming the field), as svc cannot restrict by domain', async () => {
    const refused = async (network: unknown) => (await session({ network }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.BadRequestError>;
    const restricted = await refused({ access: 'restricted', allowed_domains: ['example.com'] });
    expect(restricted).toBeInstanceOf(OpenAI.BadRequestError);
    expect(restricted.param).toBe('environment.network.access');
    const domains = await refused({ access: 'enabled', allowed_domains: ['example.com'] });
    expect(domains).toBeInstanceOf(OpenAI.BadRequestError);
    expect(domains.param).toBe('environment.network.allowed_domains');
    expect(domains.message).toContain('a domain list needs restricted access, which is unavailable');
    const template = await h.client.beta.agents.environments.templates.create({ network: { access: 'disabled', allowed_domains: ['example.com'] } }).catch((e: unknown) => e);
    expect(template).toMatchObject({ status: 400, param: 'network.allowed_domains' });
  });
});
