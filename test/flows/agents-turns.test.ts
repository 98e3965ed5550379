import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends, startOn } from '../support/backends.ts';
import { collect, FAKE_MODEL, isTurnEnd, reader, startAgentsHarness, textOf, type AgentsHarness } from '../support/agents.ts';
import { lastUserPrompt, modelRequests } from '../support/fake-provider.ts';

/**
 * Turns of agent sessions through the real `openai` 7.15.0 package against a running server: streamed text from the
 * fake provider, function tools answered by `sessions.stream()` handlers, resuming with Last-Event-ID, idempotent
 * input, messages joining a running turn, cancellation, failures, and the model extension routes.
 */
describe.each(backends)('agent session turns on $name', (backend) => {
  let h: AgentsHarness;
  const weather = { type: 'function' as const, name: 'get_weather', description: 'The weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };

  beforeAll(async () => {
    h = await startOn(backend, (url) => startAgentsHarness({}, { databaseUrl: url }));
  });
  afterAll(() => h?.stop());

  const newSession = async (model = FAKE_MODEL, tools: Array<typeof weather> = []) => {
    const agent = await h.client.beta.agents.create({ model, tools });
    return h.client.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'none' } });
  };
  const openStream = (sessionId: string, headers: Record<string, string> = {}) => h.client.beta.agents.sessions.events.stream(sessionId, { headers });

  it("streams a turn whose text is the fake provider's reply, and records its turn and items", async () => {
    const session = await newSession();
    const events = await collect(h.client.beta.agents.sessions.stream(session.id, { input: 'hello there' }));
    expect(textOf(events)).toBe('FAKE-REPLY: hello there');
    expect(events.at(-2)!.type).toBe('agent.session.turn.completed');
    expect(events.at(-1)!.type).toBe('agent.session.idle');
    const turns = await h.client.beta.agents.sessions.turns.list(session.id);
    expect(turns.data).toEqual([expect.objectContaining({ object: 'agent.session.turn', status: 'completed', subagent_id: null, error: null, session_id: session.id })]);
    expect(turns.data[0].usage).toMatchObject({ input_tokens: expect.any(Number), output_tokens: expect.any(Number) });
    const items = await collect(h.client.beta.agents.sessions.items.list(session.id, { order: 'asc' }));
    expect(items.map((i) => [i.type, (i as { role?: string }).role])).toEqual([['message', 'user'], ['message', 'assistant']]);
    expect(items[1]).toMatchObject({ content: [{ type: 'output_text', text: 'FAKE-REPLY: hello there' }], status: 'completed', turn_id: turns.data[0].id });
    expect((await h.client.beta.agents.sessions.retrieve(session.id)).usage?.total_tokens).toBeGreaterThan(0);
  });

  it('streams the creation and the first turn when a session is created with stream: true', async () => {
    const agent = await h.client.beta.agents.create({ model: FAKE_MODEL });
    const stream = await h.client.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'none' }, input: 'first words', stream: true });
    const events = await collect(stream);
    expect(events[0].type).toBe('agent.session.created');
    expect(textOf(events)).toBe('FAKE-REPLY: first words');
    expect(events.at(-1)!.type).toBe('agent.session.idle');
  });

  it('completes a turn through sessions.stream() with a function tool handler', async () => {
    const session = await newSession(FAKE_MODEL, [weather]);
    const calls: unknown[] = [];
    const events = await collect(
      h.client.beta.agents.sessions.stream(session.id, {
        input: 'CALL_TOOL get_weather {"city":"Paris"}',
        toolHandlers: { get_weather: (args) => (calls.push(args), { city: args.city, temp_c: 21 }) },
      }),
    );
    expect(calls).toEqual([{ city: 'Paris' }]);
    expect(textOf(events)).toBe('TOOL-RESULT-SEEN: {"city":"Paris","temp_c":21}');
    const types = events.map((e) => e.type);
    expect(types).toContain('agent.session.requires_action');
    expect(types.slice(-2)).toEqual(['agent.session.turn.completed', 'agent.session.idle']);
    const items = await collect(h.client.beta.agents.sessions.items.list(session.id, { order: 'asc' }));
    expect(items.map((i) => i.type)).toEqual(['message', 'function_call', 'function_call_output', 'message']);
  });

  it('resumes with Last-Event-ID without losing or repeating an event', async () => {
    const session = await newSession();
    const full = await openStream(session.id);
    const first = await openStream(session.id);
    await h.client.beta.agents.sessions.events.create(session.id, { events: [{ type: 'agent.session.input.message', input: [{ role: 'user', content: [{ type: 'input_text', text: 'SLOW_DELTAS 12 20' }] }] }] });
    const before = await collect(first, (e) => e.type === 'agent.session.turn.output_text.delta');
    first.controller.abort();
    const rest = await collect(await openStream(session.id, { 'Last-Event-ID': before.at(-1)!.event_id }), (e) => e.type === 'agent.session.idle');
    const everything = await collect(full, (e) => e.type === 'agent.session.idle');
    full.controller.abort();
    expect([...before, ...rest].map((e) => e.event_id)).toEqual(everything.map((e) => e.event_id));
    expect(textOf(rest).length).toBeGreaterThan(0);
  });

  it('applies an Idempotency-Key once: the same input twice starts one turn', async () => {
    const session = await newSession();
    const body = { events: [{ type: 'agent.session.input.message' as const, input: [{ role: 'user' as const, content: [{ type: 'input_text' as const, text: 'only once please' }] }] }] };
    const stream = await openStream(session.id);
    await h.client.beta.agents.sessions.events.create(session.id, { ...body, 'Idempotency-Key': 'same-key-1' });
    await h.client.beta.agents.sessions.events.create(session.id, { ...body, 'Idempotency-Key': 'same-key-1' });
    await collect(stream, (e) => e.type === 'agent.session.idle');
    stream.controller.abort();
    expect((await h.client.beta.agents.sessions.turns.list(session.id)).data).toHaveLength(1);
    expect(modelRequests(h.fake).filter((r) => lastUserPrompt(r) === 'only once please')).toHaveLength(1);
  });

  it('lets a message join the running turn: one turn, the model sees both messages in order', async () => {
    const session = await newSession();
    const stream = reader(await openStream(session.id));
    const say = (text: string) => h.client.beta.agents.sessions.events.create(session.id, { events: [{ type: 'agent.session.input.message', input: [{ role: 'user', content: [{ type: 'input_text', text }] }] }] });
    await say('SLOW_DELTAS 10 30');
    const head = await stream.until((e) => e.type === 'agent.session.turn.output_text.delta');
    await say('and one more thing');
    const tail = await stream.until((e) => e.type === 'agent.session.idle');
    await stream.close();
    const events = [...head, ...tail];
    expect(events.filter((e) => e.type === 'agent.session.turn.created')).toHaveLength(1);
    expect(events.filter(isTurnEnd).map((e) => e.type)).toEqual(['agent.session.turn.completed']);
    expect(textOf(events)).toContain('FAKE-REPLY: and one more thing');
    const last = modelRequests(h.fake).findLast((r) => lastUserPrompt(r) === 'and one more thing')!;
    expect(JSON.stringify(last.body)).toContain('SLOW_DELTAS 10 30');
    const items = await collect(h.client.beta.agents.sessions.items.list(session.id, { order: 'asc' }));
    expect(new Set(items.map((i) => i.turn_id)).size).toBe(1);
  });

  it('cancels the running turn: turn.cancelled, then session.idle', async () => {
    const session = await newSession();
    const stream = reader(await openStream(session.id));
    await h.client.beta.agents.sessions.events.create(session.id, { events: [{ type: 'agent.session.input.message', input: [{ role: 'user', content: [{ type: 'input_text', text: 'SLOW_DELTAS 200 50' }] }] }] });
    await stream.until((e) => e.type === 'agent.session.turn.output_text.delta');
    await h.client.beta.agents.sessions.events.create(session.id, { events: [{ type: 'agent.session.input.cancel' }] });
    const tail = await stream.until((e) => e.type === 'agent.session.idle');
    await stream.close();
    expect(tail.filter(isTurnEnd).map((e) => e.type)).toEqual(['agent.session.turn.cancelled']);
    expect(tail.at(-1)!.type).toBe('agent.session.idle');
    expect((await h.client.beta.agents.sessions.turns.list(session.id)).data[0].status).toBe('cancelled');
    expect((await h.client.beta.agents.sessions.retrieve(session.id)).status).toBe('idle');
  });

  it('fails a turn whose model call fails, and the session stays usable', async () => {
    const session = await newSession();
    const failed = await collect(h.client.beta.agents.sessions.stream(session.id, { input: 'FAIL_HTTP_500' }));
    const end = failed.find(isTurnEnd)!;
    expect(end.type).toBe('agent.session.turn.failed');
    expect((end as { turn: { error: { code: string } } }).turn.error.code).toBe('server_error');
    expect(textOf(await collect(h.client.beta.agents.sessions.stream(session.id, { input: 'still there?' })))).toBe('FAKE-REPLY: still there?');
  });

  it("runs a provider:model agent on the organisation's own key, on that provider's wire", async () => {
    expect((await h.svc.api('/api/providers/google/key', { method: 'PUT', json: { key: 'g-org-key-5678' } })).status).toBe(200);
    try {
      const session = await newSession('google:fake-model');
      expect(textOf(await collect(h.client.beta.agents.sessions.stream(session.id, { input: 'hello gemini' })))).toBe('FAKE-REPLY: hello gemini');
      const request = modelRequests(h.fake).at(-1)!;
      expect(request).toMatchObject({ wire: 'gemini', path: '/v1beta/models/fake-model:streamGenerateContent', headers: { 'x-goog-api-key': 'g-org-key-5678' } });
      expect((await h.client.beta.agents.sessions.retrieve(session.id)).agent.model).toBe('google:fake-model');
    } finally {
      await h.svc.api('/api/providers/google/key', { method: 'DELETE' });
    }
  });

  it("fails the turn clearly when a provider model has no organisation key", async () => {
    const session = await newSession('openai/gpt-4o');
    const events = await collect(h.client.beta.agents.sessions.stream(session.id, { input: 'hi' }));
    const end = events.find(isTurnEnd) as { type: string; turn: { error: { code: string; message: string } } };
    expect(end.type).toBe('agent.session.turn.failed');
    expect(end.turn.error).toMatchObject({ code: 'authentication_error', message: expect.stringContaining('no openai key is set') });
  });

  it('lists platform models at /v1/models and every model by who pays at /api/models', async () => {
    const ids = (await collect(h.client.models.list())).map((m) => m.id);
    expect(ids).toEqual(expect.arrayContaining(['svc/demo/demo', 'svc/fake/fake-model']));
    const res = await h.svc.api('/api/models');
    const body = await res.json();
    expect(body.groups.map((g: { paidBy: string }) => g.paidBy)).toEqual(['platform', 'own_key']);
    expect(body.groups[1].providers.map((p: { provider: string }) => p.provider)).toEqual(['openai', 'anthropic', 'google', 'bedrock', 'azure', 'mistral', 'xai', 'groq', 'openrouter', 'openai-compatible']);
    expect(body.groups[1].providers[0].models).toContainEqual({ id: 'openai:gpt-4o', name: 'GPT-4o' });
  });

  it("switches the model of a session's next turn through /api/sessions/{id}/model", async () => {
    const session = await newSession('svc/demo/echo');
    expect(textOf(await collect(h.client.beta.agents.sessions.stream(session.id, { input: 'one' })))).toBe('demo reply: one');
    expect(await (await h.svc.api(`/api/sessions/${session.id}/model`)).json()).toEqual({ sessionId: session.id, model: 'svc/demo/echo' });
    const bad = await h.svc.api(`/api/sessions/${session.id}/model`, { method: 'POST', json: { model: 'gpt-4o' } });
    expect(bad.status).toBe(400);
    const ok = await h.svc.api(`/api/sessions/${session.id}/model`, { method: 'POST', json: { model: FAKE_MODEL } });
    expect(await ok.json()).toEqual({ sessionId: session.id, model: FAKE_MODEL });
    expect(textOf(await collect(h.client.beta.agents.sessions.stream(session.id, { input: 'two' })))).toBe('FAKE-REPLY: two');
    expect((await h.client.beta.agents.sessions.retrieve(session.id)).agent.model).toBe(FAKE_MODEL);
  });
});

describe('a conductor that stops while a turn runs', () => {
  it('ends the turn with turn.failed and agent.session.idle on the open stream, then closes it', async () => {
    const h = await startAgentsHarness();
    try {
      const agent = await h.client.beta.agents.create({ model: FAKE_MODEL });
      const session = await h.client.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'none' } });
      const stream = reader(await h.client.beta.agents.sessions.events.stream(session.id));
      await h.client.beta.agents.sessions.events.create(session.id, { events: [{ type: 'agent.session.input.message', input: [{ role: 'user', content: [{ type: 'input_text', text: 'SLOW_DELTAS 500 50' }] }] }] });
      await stream.until((e) => e.type === 'agent.session.turn.output_text.delta');
      const stopping = h.svc.stop();
      const tail = await stream.until(() => false); // until the server ends the stream
      await stopping;
      expect(tail.filter((e) => isTurnEnd(e) || e.type === 'agent.session.idle').map((e) => e.type)).toEqual(['agent.session.turn.failed', 'agent.session.idle']);
    } finally {
      await h.stop().catch(() => {});
    }
  });
});
