import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTenant } from '../../src/db/index.ts';
import { insertConnection } from '../../src/modules/conductor/apps/index.ts';
import { readNdjson } from '../../src/shared/ndjson.ts';
import { collect, startAgentsHarness, type AgentsHarness } from '../support/agents.ts';
import { startMcpServer, type TestMcpServer } from '../support/mcp-server.ts';
import { readSse, type RunEventLike } from '../support/sse.ts';

/**
 * A run's events as variant B of seed 000 has them: the raw NDJSON stream (`GET /api/runs/{id}/events`) carrying the
 * runtime session id on every event; a run refused with 409 while its profile's dependencies are not ready; the
 * model's reasoning as `thinking` (runs stored as `reasoning` replay under the new name); and the capability events
 * of the `general` runtime's dynamic tool loading.
 */
describe('run events', () => {
  let h: AgentsHarness;
  let big: TestMcpServer;
  const api = (path: string, init?: Parameters<AgentsHarness['svc']['api']>[1]) => h.svc.api(path, init);
  const db = () => h.svc.server.built.database!.db;
  type Line = RunEventLike & { seq: number; runtimeSessionId: string | null };
  const profile = async (body: Record<string, unknown>) => expect((await api('/api/profiles', { method: 'POST', json: { runtime: 'general', model: 'openai-compatible:fake-model', ...body } })).status).toBe(201);
  const start = async (profileName: string, prompt: string) => {
    const res = await api('/api/runs', { method: 'POST', json: { profile: profileName, prompt } });
    expect(res.status).toBe(202);
    return (await res.json()) as { runId: string; sessionId: string };
  };
  const sse = async (runId: string): Promise<Array<RunEventLike & { id: number }>> => (await readSse(await api(`/api/runs/${runId}/stream`))).map((f) => ({ id: f.id, ...f.event }));
  const lines = async (runId: string, query = '') => {
    const res = await api(`/api/runs/${runId}/events${query}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-ndjson');
    return collect(readNdjson<Line>(res.body!));
  };

  beforeAll(async () => {
    h = await startAgentsHarness();
    big = await startMcpServer({ name: 'big', extraTools: 40 });
    await profile({ name: 'plain' });
  }, 60_000);
  afterAll(async () => {
    await h?.stop();
    await big?.close();
  });

  describe('the raw event stream', () => {
    it('carries every stored event with its seq and the runtime session id, which the SSE stream leaves out', async () => {
      const { runId, sessionId } = await start('plain', 'hello raw events');
      const frames = await sse(runId);
      const raw = await lines(runId);
      expect(raw.map((l) => l.seq)).toEqual(frames.map((f) => f.id));
      expect(raw.map((l) => l.type)).toEqual(frames.map((f) => f.type));
      const init = raw.find((l) => l.type === 'session_init')!;
      expect(init.runtimeSessionId).toEqual(expect.any(String));
      expect(raw.every((l) => l.runtimeSessionId === init.runtimeSessionId)).toBe(true);
      expect(frames.some((f) => 'runtimeSessionId' in f)).toBe(false);
      expect(raw.at(-1)).toMatchObject({ type: 'result', message: 'FAKE-REPLY: hello raw events' });
      // and the session row's metadata keeps it once the run is over
      expect((await (await api(`/api/sessions/${sessionId}`)).json()).metadata).toEqual({ runtimeSessionId: init.runtimeSessionId });
      // resumes after a seq
      expect((await lines(runId, '?after=2')).map((l) => l.seq)).toEqual(frames.slice(2).map((f) => f.id));
    });

    it('follows a running run live and ends after its terminal event', async () => {
      const { runId } = await start('plain', 'HOLD rawlive\nstill thinking');
      const res = await api(`/api/runs/${runId}/events`);
      const reader = readNdjson<Line>(res.body!);
      // the session starts before the model answers: it arrives while the run still waits on the model
      let first = await reader.next();
      while (!first.done && first.value.type !== 'session_init') first = await reader.next();
      expect(first.value).toMatchObject({ type: 'session_init', runtimeSessionId: expect.any(String) });
      expect((await (await api(`/api/runs/${runId}`)).json()).status).toBe('running');
      h.fake.release('rawlive');
      const rest = await collect(reader);
      expect(rest.at(-1)).toMatchObject({ type: 'result', runtimeSessionId: first.value.runtimeSessionId });
    });

    it('answers an unknown run with 404 and a bad seq with 400', async () => {
      expect((await api('/api/runs/run_nobody/events')).status).toBe(404);
      const bad = await api('/api/runs/run_nobody/events?after=-1');
      expect(bad.status).toBe(400);
      expect(await bad.json()).toEqual({ error: 'after: expected a non-negative integer event seq' });
    });
  });

  it("refuses a run with 409 naming each dependency of its profile that is not ready, and starts nothing", async () => {
    expect((await api('/api/skills', { method: 'POST', json: { name: 'summarize', body: 'Summarize well.' } })).status).toBe(201);
    await withTenant(db(), 'default', (tx) => insertConnection(tx, { tenantId: 'default', provider: 'github', appSlug: 'octo-app', status: 'pending', mcpServerName: 'github' }));
    await profile({
      name: 'needy',
      skills: ['summarize'],
      mcpServers: [
        // as a kit copy leaves them: credential-shaped values emptied, to be filled in
        { name: 'docs', transport: 'http', url: 'https://docs.example.com/mcp?token=&lang=en', headers: { Authorization: '', 'X-Team': 'blue' } },
        { name: 'github', transport: 'http', url: 'https://mcp.github.example.com/mcp' },
      ],
    });
    expect((await api('/api/skills/summarize', { method: 'DELETE' })).status).toBe(204);
    const runsBefore = await (await api('/api/runs')).json();
    const sessionsBefore = await (await api('/api/sessions')).json();

    const res = await api('/api/runs', { method: 'POST', json: { profile: 'needy', prompt: 'go' } });
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({
      error:
        'profile needy is not ready: skill summarize is not installed; MCP server docs: credential header Authorization is empty; ' +
        'MCP server docs: credential token in its URL is empty; MCP server github: connected app github (octo-app) is pending, not connected',
      missing: [
        { kind: 'skill', name: 'summarize', detail: 'skill summarize is not installed' },
        { kind: 'mcp_credential', name: 'docs.headers.Authorization', detail: 'MCP server docs: credential header Authorization is empty' },
        { kind: 'mcp_credential', name: 'docs.url?token', detail: 'MCP server docs: credential token in its URL is empty' },
        { kind: 'connected_app', name: 'github', detail: 'MCP server github: connected app github (octo-app) is pending, not connected' },
      ],
    });
    expect(await (await api('/api/runs')).json()).toEqual(runsBefore);
    expect(await (await api('/api/sessions')).json()).toEqual(sessionsBefore);

    // filled in and installed, the same profile runs
    expect((await api('/api/skills', { method: 'POST', json: { name: 'summarize', body: 'Summarize well.' } })).status).toBe(201);
    await withTenant(db(), 'default', (tx) => sql`update connected_apps set status = 'active' where mcp_server_name = 'github'`.execute(tx));
    const fixed = { name: 'needy', runtime: 'general', model: 'openai-compatible:fake-model', skills: ['summarize'], mcpServers: [{ name: 'docs', transport: 'http', url: 'https://docs.example.com/mcp?token=t0k3n', headers: { Authorization: 'Bearer filled-in' } }, { name: 'github', transport: 'http', url: 'https://mcp.github.example.com/mcp' }] };
    expect((await api('/api/profiles/needy', { method: 'PUT', json: fixed })).status).toBe(200);
    expect((await api('/api/runs', { method: 'POST', json: { profile: 'needy', prompt: 'go' } })).status).toBe(202);
  });

  it("streams the model's reasoning as thinking, which /v1 still shows as a reasoning summary, and replays runs stored as reasoning under the new name", async () => {
    expect((await api('/api/providers/openai/key', { method: 'PUT', json: { key: 'sk-org-thinking' } })).status).toBe(200);
    const agent = await h.client.beta.agents.create({ model: 'openai/gpt-5', reasoning: { effort: 'high', summary: 'detailed' } });
    const session = await h.client.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'none' } });
    const v1 = (await collect(h.client.beta.agents.sessions.stream(session.id, { input: 'why is the sky blue?' }))) as Array<{ type: string; delta?: string }>;
    expect(v1.filter((e) => e.type === 'agent.session.turn.reasoning_summary_text.delta').map((e) => e.delta).join('')).toBe('Reading the prompt closely. Planning a short reply.');

    const [run] = (await (await api('/api/runs?limit=1')).json()) as Array<{ id: string }>;
    const thinking = (events: RunEventLike[]) => events.filter((e) => e.type === 'thinking').map((e) => e.message).join('');
    const live = await sse(run.id);
    expect(thinking(live)).toBe('Reading the prompt closely. Planning a short reply.');
    expect(live.some((e) => e.type === 'reasoning')).toBe(false);

    // a run stored before the rename: its events read `reasoning` in the log
    const renamed = await withTenant(db(), 'default', (tx) =>
      sql`update run_events set event = jsonb_set(event, '{type}', '"reasoning"') where run_id = ${run.id} and event->>'type' = 'thinking'`.execute(tx),
    );
    expect(Number(renamed.numAffectedRows)).toBeGreaterThan(0);
    const replayed = await sse(run.id);
    expect(replayed.map((e) => e.type)).toEqual(live.map((e) => e.type));
    expect(thinking(replayed)).toBe(thinking(live));
    expect(thinking((await (await api(`/api/runs/${run.id}`)).json()).events)).toBe(thinking(live));
    expect(thinking(await lines(run.id))).toBe(thinking(live));
    await api('/api/providers/openai/key', { method: 'DELETE' });
  });

  it("reports the dynamic loading of a large tool catalog: the decision and the context it saves, then a span per call_tool", async () => {
    await profile({ name: 'many-tools', mcpServers: [{ name: 'big', transport: 'http', url: big.url }] });
    const { runId } = await start('many-tools', 'CALL_TOOL call_tool {"name":"big__echo","arguments":{"message":"loaded on demand"}}');
    const events = await sse(runId);
    const order = events.map((e) => e.type).filter((t) => t.startsWith('capability_') || t.startsWith('tool_'));
    expect(order).toEqual(['capability_decision', 'capability_context_savings', 'tool_call', 'tool_result', 'capability_span']);
    const of = (type: string) => events.find((e) => e.type === type)!;
    // the session toolkit's five file tools, and the server's echo, fail and 40 fillers
    expect(of('capability_decision').capability).toEqual({
      strategy: 'dynamic',
      reason: 'the run has 47 tools, more than the 32 offered to the model directly: it finds and calls them through search_tools and call_tool',
      catalogSize: 47,
      threshold: 32,
      offered: ['search_tools', 'call_tool'],
    });
    const savings = of('capability_context_savings').capability as { catalogSchemaBytes: number; offeredSchemaBytes: number; savedBytes: number; estimatedTokensSaved: number };
    expect(savings.savedBytes).toBe(savings.catalogSchemaBytes - savings.offeredSchemaBytes);
    expect(savings.estimatedTokensSaved).toBe(Math.ceil(savings.savedBytes / 4));
    expect(of('capability_span')).toMatchObject({ toolCallId: of('tool_call').toolCallId, capability: { tool: 'big__echo', found: true, isError: false, durationMs: expect.any(Number) } });
    expect(big.calls).toEqual([{ name: 'echo', args: { message: 'loaded on demand' } }]);
    expect(events.at(-1)).toMatchObject({ type: 'result', message: 'TOOL-RESULT-SEEN: echo: loaded on demand' });
  });
});
