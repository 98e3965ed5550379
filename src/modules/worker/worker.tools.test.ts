import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configureLogging } from '../../shared/log.ts';
import { startFakeProvider, modelRequests, lastInputOf, type FakeProvider } from '../../../test/support/fake-provider.ts';
import { startMcpServer, type TestMcpServer } from '../../../test/support/mcp-server.ts';
import { startTestWorker, runBody, runToEnd, ofType, type TestWorker } from '../../../test/support/worker.ts';

configureLogging({ level: 'warn' });

/** Tool wiring of the general runtime, over the Chat Completions wire (the wire does not matter here). */
describe('general runtime tools', () => {
  let fake: FakeProvider;
  let session: TestMcpServer;
  let external: TestMcpServer;
  let big: TestMcpServer;
  let w: TestWorker;
  const model = 'openai-compatible:fake-model';
  const toolNames = (body: any): string[] => (body.tools ?? []).map((t: any) => t.function?.name);

  beforeAll(async () => {
    fake = await startFakeProvider();
    session = await startMcpServer({ name: 'session' });
    external = await startMcpServer({ name: 'external' });
    big = await startMcpServer({ name: 'big', extraTools: 40 });
    w = await startTestWorker({ providerEnv: { OPENAI_COMPATIBLE_BASE_URL: fake.url } });
  });
  afterAll(async () => {
    await Promise.all([w.close(), fake.close(), session.close(), external.close(), big.close()]);
  });

  it('prefixes profile MCP server tools with the server name', async () => {
    const events = await runToEnd(w.url, runBody('CALL_TOOL ext__echo {"message":"outside"}', { model, sessionMcpUrl: session.url, mcpServers: [{ name: 'ext', transport: 'http', url: external.url }] }));
    expect(ofType(events, 'tool_result')[0]).toMatchObject({ toolName: 'ext__echo', output: { content: [{ text: 'echo: outside' }] } });
    expect(external.calls).toEqual([{ name: 'echo', args: { message: 'outside' } }]);
    expect(toolNames(modelRequests(fake).at(-1)!.body)).toEqual(expect.arrayContaining(['echo', 'fail', 'ext__echo', 'ext__fail']));
  });

  it('shows the model only the allowlisted tools', async () => {
    await runToEnd(w.url, runBody('hello', { model, sessionMcpUrl: session.url, profile: { tools: ['echo'] }, mcpServers: [{ name: 'ext', transport: 'http', url: external.url }] }));
    expect(toolNames(modelRequests(fake).at(-1)!.body)).toEqual(['echo']);
  });

  it("keeps the session toolkit's connection across a session's runs while the runner's toolset name stays the same", async () => {
    const toolkit = await startMcpServer({ name: 'kept' });
    try {
      const urlWith = (token: string, toolset: string) => `${toolkit.url}?svc_worker_token=${token}&svc_toolset=${toolset}`;
      const run = (token: string, toolset: string, message: string) =>
        runToEnd(w.url, runBody(`CALL_TOOL echo {"message":"${message}"}`, { model, sessionId: 'sess-kept', sessionMcpUrl: urlWith(token, toolset) }));
      for (const [token, message] of [['t1', 'one'], ['t2', 'two']]) {
        const events = await run(token, 'a', message);
        expect(ofType(events, 'tool_result')[0]).toMatchObject({ toolName: 'echo', output: { content: [{ text: `echo: ${message}` }] } });
      }
      // one handshake and one tool list for both runs (each run's URL carried a fresh token), a call per run
      const rpc = () => toolkit.methods.filter((m) => ['server/discover', 'initialize', 'tools/list', 'tools/call'].includes(m));
      expect(rpc().filter((m) => m !== 'server/discover')).toEqual(['initialize', 'tools/list', 'tools/call', 'tools/call']);
      expect(rpc().filter((m) => m === 'server/discover').length).toBeLessThanOrEqual(1);
      // another toolset name (the runner restarted, or the profile's tools changed): a new connection
      await run('t3', 'b', 'three');
      expect(toolkit.methods.filter((m) => m === 'initialize' || m === 'tools/list')).toEqual(['initialize', 'tools/list', 'initialize', 'tools/list']);
      // without a toolset name nothing is kept: every run connects
      const before = toolkit.methods.length;
      await runToEnd(w.url, runBody('hello', { model, sessionId: 'sess-plain', sessionMcpUrl: toolkit.url }));
      await runToEnd(w.url, runBody('hello', { model, sessionId: 'sess-plain', sessionMcpUrl: toolkit.url }));
      expect(toolkit.methods.slice(before).filter((m) => m === 'initialize')).toHaveLength(2);
    } finally {
      await toolkit.close();
    }
  });

  it("starts a new session of a listed toolset without a handshake, and connects that session's endpoint at its first tool call", async () => {
    const toolkit = await startMcpServer({ name: 'listed' });
    try {
      // two sessions of one runner and toolset: the same endpoint here, told apart by the session's query string
      const urlOf = (session: string, token: string) => `${toolkit.url}?session=${session}&svc_worker_token=${token}&svc_toolset=shared`;
      const first = await runToEnd(w.url, runBody('CALL_TOOL echo {"message":"one"}', { model, sessionId: 'sess-l1', sessionMcpUrl: urlOf('l1', 't1') }));
      expect(ofType(first, 'tool_result')[0]).toMatchObject({ output: { content: [{ text: 'echo: one' }] } });
      const handshakes = () => toolkit.methods.filter((m) => m === 'initialize' || m === 'tools/list');
      expect(handshakes()).toEqual(['initialize', 'tools/list']);
      // a run of a new session that calls no tool: the model still sees the toolkit's tools, the endpoint hears nothing
      const before = toolkit.methods.length;
      await runToEnd(w.url, runBody('hello', { model, sessionId: 'sess-l2', sessionMcpUrl: urlOf('l2', 't2') }));
      expect(toolNames(modelRequests(fake).at(-1)!.body)).toEqual(expect.arrayContaining(['echo', 'fail']));
      expect(toolkit.methods.slice(before)).toEqual([]);
      // its first tool call opens its own connection (no second tool list), which its next run keeps
      for (const [token, message] of [['t3', 'two'], ['t4', 'three']]) {
        const events = await runToEnd(w.url, runBody(`CALL_TOOL echo {"message":"${message}"}`, { model, sessionId: 'sess-l2', sessionMcpUrl: urlOf('l2', token) }));
        expect(ofType(events, 'tool_result')[0]).toMatchObject({ output: { content: [{ text: `echo: ${message}` }] } });
      }
      expect(handshakes()).toEqual(['initialize', 'tools/list', 'initialize']);
      expect(toolkit.calls.map((c) => c.args)).toEqual([{ message: 'one' }, { message: 'two' }, { message: 'three' }]);
    } finally {
      await toolkit.close();
    }
  });

  it('reports an MCP error result as a failed tool result and tells the model', async () => {
    const events = await runToEnd(w.url, runBody('CALL_TOOL fail {}', { model, sessionMcpUrl: session.url }));
    expect(ofType(events, 'tool_result')[0]).toMatchObject({ toolName: 'fail', isError: true });
    expect(lastInputOf(modelRequests(fake).at(-1)!)?.text).toContain('this tool always fails');
  });

  it('hides a large catalog behind search_tools and call_tool, which still reach the real tool', async () => {
    const events = await runToEnd(w.url, runBody('CALL_TOOL call_tool {"name":"echo","arguments":{"message":"via meta"}}', { model, sessionMcpUrl: big.url }));
    expect(toolNames(modelRequests(fake).at(-2)!.body).sort()).toEqual(['call_tool', 'search_tools']);
    expect(ofType(events, 'tool_result')[0]).toMatchObject({ toolName: 'call_tool', isError: false, output: { content: [{ text: 'echo: via meta' }] } });
    expect(events.at(-1)).toMatchObject({ type: 'result', message: 'TOOL-RESULT-SEEN: echo: via meta' });
    // the dynamic loading reported: its decision and the context it saves up front, the call's span after its result
    const types = events.map((e) => e.type).filter((t) => t.startsWith('capability_') || t.startsWith('tool_'));
    expect(types).toEqual(['capability_decision', 'capability_context_savings', 'tool_call', 'tool_result', 'capability_span']);
    expect(ofType(events, 'capability_decision')[0].capability).toMatchObject({ strategy: 'dynamic', catalogSize: 42, threshold: 32 });
    const call = ofType(events, 'tool_call')[0];
    expect(ofType(events, 'capability_span')[0]).toMatchObject({ toolCallId: call.toolCallId, capability: { tool: 'echo', found: true, isError: false } });
  });

  it('finds tools with search_tools', async () => {
    const events = await runToEnd(w.url, runBody('CALL_TOOL search_tools {"query":"echo"}', { model, sessionMcpUrl: big.url }));
    const output = ofType(events, 'tool_result')[0].output as { structuredContent: { tools: Array<{ name: string; inputSchema: unknown }> } };
    expect(output.structuredContent.tools[0]).toMatchObject({ name: 'echo', inputSchema: expect.objectContaining({ type: 'object' }) });
  });

  it('appends skills to the system prompt', async () => {
    await runToEnd(w.url, runBody('hi', {
      model,
      sessionMcpUrl: session.url,
      profile: { systemPrompt: 'You are terse.' },
      skills: [{ name: 'pdf-forms', description: 'Fill PDF forms', body: 'Always check field names first.', resources: [{ path: 'forms/guide.md', size: 120 }] }],
    }));
    const system = modelRequests(fake).at(-1)!.body.messages.find((m: any) => m.role === 'system')?.content as string;
    expect(system).toContain('You are terse.');
    expect(system).toContain('### pdf-forms');
    expect(system).toContain('Always check field names first.');
    expect(system).toContain('- forms/guide.md (120 bytes)');
  });
});
