import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { collect, FAKE_MODEL, isTurnEnd, rawEvents, reader, startAgentsHarness, textOf, type AgentsHarness } from '../support/agents.ts';

/**
 * The server behaviours of spec §8 ("easy to miss") that concern agents, sessions and events, one named test per
 * item, checked through the real `openai` 7.15.0 package and, where the SDK hides the wire, over plain fetch.
 */
describe('agents API, spec §8', () => {
  let h: AgentsHarness;
  beforeAll(async () => {
    h = await startAgentsHarness({ SVC_SSE_KEEPALIVE_MS: '100' });
  });
  afterAll(async () => h?.stop());

  const weather = { type: 'function' as const, name: 'get_weather', description: 'The weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } };
  const newSession = async (tools: Array<typeof weather> = []) => {
    const agent = await h.client.beta.agents.create({ model: FAKE_MODEL, tools });
    return h.client.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'none' } });
  };
  const message = (text: string) => ({ type: 'agent.session.input.message' as const, input: [{ role: 'user' as const, content: [{ type: 'input_text' as const, text }] }] });
  const send = (sessionId: string, text: string, key?: string) => h.client.beta.agents.sessions.events.create(sessionId, { events: [message(text)], ...(key ? { 'Idempotency-Key': key } : {}) });
  const events = (sessionId: string, headers: Record<string, string> = {}) => h.client.beta.agents.sessions.events.stream(sessionId, { headers });
  const post = (sessionId: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${h.svc.url}/v1/agents/sessions/${sessionId}/events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.svc.key}`, 'content-type': 'application/json', 'openai-beta': 'agents=v1', ...headers },
      body: JSON.stringify(body),
    });

  it('8.1 flushes the event stream headers at once, before any event, and delivers the turn that follows', async () => {
    const session = await newSession();
    const raw = rawEvents(h, session.id);
    const res = await raw.response;
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(raw.frames).toEqual([]);
    await send(session.id, 'after subscribing');
    expect((await raw.until((f) => f.event === 'agent.session.turn.created')).data.turn.subagent_id).toBeNull();
    await raw.until((f) => f.event === 'agent.session.idle');
    await raw.close();
  });

  it('8.2 a fresh subscription does not replay earlier turns', async () => {
    const session = await newSession();
    const earlier = await collect(h.client.beta.agents.sessions.stream(session.id, { input: 'the first turn' }));
    const earlierTurn = earlier.find((e) => e.type === 'agent.session.turn.created')!.turn_id;
    const stream = reader(await events(session.id));
    await send(session.id, 'the second turn');
    const seen = await stream.until((e) => e.type === 'agent.session.idle');
    await stream.close();
    expect(seen[0].type).toBe('agent.session.turn.created');
    expect(seen.some((e) => 'turn_id' in e && e.turn_id === earlierTurn)).toBe(false);
    expect(textOf(seen)).toBe('FAKE-REPLY: the second turn');
  });

  it('8.3 root turns carry subagent_id null, and the same turn_id on turn.created and the terminal event', async () => {
    const session = await newSession();
    const seen = await collect(h.client.beta.agents.sessions.stream(session.id, { input: 'root turn' }));
    const created = seen.find((e) => e.type === 'agent.session.turn.created') as { turn_id: string; turn: { id: string; subagent_id: unknown } };
    const ended = seen.find(isTurnEnd) as { turn_id: string; turn: { id: string; subagent_id: unknown } };
    expect(created.turn).toHaveProperty('subagent_id', null);
    expect(ended.turn).toHaveProperty('subagent_id', null);
    expect([created.turn_id, created.turn.id, ended.turn.id]).toEqual([ended.turn_id, ended.turn_id, ended.turn_id]);
  });

  it('8.4 ends every turn with its terminal event, then agent.session.idle — after success, failure and cancellation', async () => {
    const session = await newSession();
    for (const input of ['fine', 'FAIL_HTTP_500']) {
      const seen = await collect(h.client.beta.agents.sessions.stream(session.id, { input }));
      const ends = seen.filter((e) => isTurnEnd(e) || e.type === 'agent.session.idle').map((e) => e.type);
      expect(ends).toEqual([input === 'fine' ? 'agent.session.turn.completed' : 'agent.session.turn.failed', 'agent.session.idle']);
    }
    const stream = reader(await events(session.id));
    await send(session.id, 'SLOW_DELTAS 200 40');
    await stream.until((e) => e.type === 'agent.session.turn.output_text.delta');
    await h.client.beta.agents.sessions.events.create(session.id, { events: [{ type: 'agent.session.input.cancel' }] });
    const tail = await stream.until((e) => e.type === 'agent.session.idle');
    await stream.close();
    expect(tail.filter((e) => isTurnEnd(e) || e.type === 'agent.session.idle').map((e) => e.type)).toEqual(['agent.session.turn.cancelled', 'agent.session.idle']);
  });

  it('8.5 announces a function call completely in turn.item.added', async () => {
    const session = await newSession([weather]);
    const stream = reader(await events(session.id));
    await send(session.id, 'CALL_TOOL get_weather {"city":"Oslo"}');
    const added = (await stream.until((e) => e.type === 'agent.session.turn.item.added' && e.item.type === 'function_call')).at(-1) as any;
    expect(added.item).toMatchObject({ type: 'function_call', name: 'get_weather', call_id: expect.stringMatching(/^call_/), turn_id: added.turn_id, status: 'in_progress' });
    expect(JSON.parse(added.item.arguments)).toEqual({ city: 'Oslo' });
    expect(added.output_index).toEqual(expect.any(Number));
    await h.client.beta.agents.sessions.events.create(session.id, { events: [{ type: 'agent.session.input.tool_result', turn_id: added.turn_id, call_id: added.item.call_id, success: true, output: 'sunny' }] });
    await stream.until((e) => e.type === 'agent.session.idle');
    await stream.close();
  });

  it('8.6 registers a call before announcing it, and answers an unknown call with the exact 400', async () => {
    const session = await newSession([weather]);
    const stream = reader(await events(session.id));
    await send(session.id, 'CALL_TOOL get_weather {"city":"Rome"}');
    const added = (await stream.until((e) => e.type === 'agent.session.turn.item.added' && e.item.type === 'function_call')).at(-1) as any;
    // answered the moment it is announced, while the session may still read in_progress
    const ok = await post(session.id, { events: [{ type: 'agent.session.input.tool_result', turn_id: added.turn_id, call_id: added.item.call_id, success: true, output: 'warm' }] });
    expect(ok.status).toBe(204);
    expect(textOf(await stream.until((e) => e.type === 'agent.session.idle'))).toBe('TOOL-RESULT-SEEN: warm');
    await stream.close();
    const unknown = await post(session.id, { events: [{ type: 'agent.session.input.tool_result', turn_id: added.turn_id, call_id: 'call_nope', success: true, output: 'x' }] });
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toEqual({ error: { message: 'Unknown pending tool call: call_nope', type: 'invalid_request_error', code: 'invalid_request_error', param: null } });
  });

  it('8.7 accepts tool results one per POST: output null, a content array, or success false with an error', async () => {
    const session = await newSession([weather]);
    const answers = [
      { result: { success: true, output: null }, model: 'TOOL-RESULT-SEEN: null', item: { output: null, error: null, status: 'completed' } },
      { result: { success: true, output: [{ type: 'input_text', text: 'cloudy' }] }, model: 'TOOL-RESULT-SEEN: cloudy', item: { output: [{ type: 'input_text', text: 'cloudy' }], status: 'completed' } },
      { result: { success: false, error: 'Tool handler failed.' }, model: 'TOOL-RESULT-SEEN: Tool handler failed.', item: { output: null, error: 'Tool handler failed.', status: 'failed' } },
    ];
    for (const a of answers) {
      const stream = reader(await events(session.id));
      await send(session.id, 'CALL_TOOL get_weather {"city":"Bern"}');
      const added = (await stream.until((e) => e.type === 'agent.session.turn.item.added' && e.item.type === 'function_call')).at(-1) as any;
      await h.client.beta.agents.sessions.events.create(session.id, { events: [{ type: 'agent.session.input.tool_result', turn_id: added.turn_id, call_id: added.item.call_id, ...(a.result as any) }] });
      const rest = await stream.until((e) => e.type === 'agent.session.idle');
      await stream.close();
      expect(rest.find((e) => e.type === 'agent.session.turn.item.added' && e.item.type === 'function_call_output')).toMatchObject({ output_index: null, item: a.item });
      expect(textOf(rest)).toBe(a.model);
    }
  });

  it('8.8 a repeated admitted Idempotency-Key is 204 without re-applying; a refusal is not cached', async () => {
    const session = await newSession();
    const stream = reader(await events(session.id));
    expect((await post(session.id, { events: [message('idempotent')] }, { 'Idempotency-Key': 'k-8.8' })).status).toBe(204);
    expect((await post(session.id, { events: [message('idempotent')] }, { 'Idempotency-Key': 'k-8.8' })).status).toBe(204);
    await stream.until((e) => e.type === 'agent.session.idle');
    await stream.close();
    expect((await h.client.beta.agents.sessions.turns.list(session.id)).data).toHaveLength(1);
    const refused = { events: [{ type: 'agent.session.input.tool_result', turn_id: 'turn_x', call_id: 'call_x', success: true, output: 'x' }] };
    expect((await post(session.id, refused, { 'Idempotency-Key': 'k-8.8-refused' })).status).toBe(400);
    expect((await post(session.id, refused, { 'Idempotency-Key': 'k-8.8-refused' })).status).toBe(400);
  });

  it('8.9 uses event_id as the SSE id and accepts it as Last-Event-ID; a foreign cursor is 400', async () => {
    const session = await newSession();
    const raw = rawEvents(h, session.id);
    await raw.response;
    await send(session.id, 'ids please');
    await raw.until((f) => f.event === 'agent.session.idle');
    await raw.close();
    for (const f of raw.frames) expect([f.id, f.event]).toEqual([f.data.event_id, f.data.type]);
    const ids = raw.frames.map((f) => f.id);
    expect(new Set(ids).size).toBe(ids.length);
    const resumed = rawEvents(h, session.id, { 'Last-Event-ID': ids[2]! });
    await resumed.until((f) => f.id === ids.at(-1));
    await resumed.close();
    expect(resumed.frames.map((f) => f.id)).toEqual(ids.slice(3));
    const bad = await fetch(`${h.svc.url}/v1/agents/sessions/${session.id}/events`, { headers: { authorization: `Bearer ${h.svc.key}`, 'Last-Event-ID': 'evt_other_3' } });
    expect(bad.status).toBe(400);
  });

  it('8.10 keeps the stream alive with comment lines and never sends an event without data', async () => {
    const session = await newSession();
    const raw = rawEvents(h, session.id);
    await raw.response;
    await send(session.id, 'keep me alive');
    await raw.until((f) => f.event === 'agent.session.idle');
    await new Promise<void>((resolve) => {
      const tick = setInterval(() => raw.text.split(': keep-alive\n\n').length > 2 && (clearInterval(tick), resolve()), 20);
    });
    await raw.close();
    const records = raw.text.split('\n\n').filter((r) => r.trim());
    for (const r of records) {
      if (/^event:/m.test(r)) expect(r).toMatch(/^data: \{/m);
      else expect(r).toBe(': keep-alive');
    }
  });

  it('8.11 reports a failed turn with turn.failed and Turn.error, never with a top-level error', async () => {
    const session = await newSession();
    const seen = await collect(h.client.beta.agents.sessions.stream(session.id, { input: 'FAIL_HTTP_500' }));
    expect(seen.filter((e) => (e as { error?: unknown }).error)).toEqual([]);
    const failed = seen.find((e) => e.type === 'agent.session.turn.failed') as { turn: { status: string; error: { code: string; message: string } } };
    expect(failed.turn).toMatchObject({ status: 'failed', error: { code: 'server_error', message: expect.stringContaining('HTTP 500') } });
    expect(seen.at(-1)!.type).toBe('agent.session.idle');
  });

  it('8.12 answers JSON with application/json, and chooses SSE for stream: true whatever Accept says', async () => {
    const list = await fetch(`${h.svc.url}/v1/agents`, { headers: { authorization: `Bearer ${h.svc.key}` } });
    expect(list.headers.get('content-type')).toMatch(/^application\/json/);
    const agent = await h.client.beta.agents.create({ model: 'svc/demo/echo' });
    const res = await fetch(`${h.svc.url}/v1/agents/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.svc.key}`, accept: 'application/json', 'content-type': 'application/json' },
      body: JSON.stringify({ agent_id: agent.id, environment: { type: 'none' }, stream: true }),
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(await res.text()).toMatch(/^event: agent\.session\.created$/m);
  });

  it('8.13 sets has_more explicitly and lists in descending order by default', async () => {
    const session = await newSession();
    await collect(h.client.beta.agents.sessions.stream(session.id, { input: 'one' }));
    await collect(h.client.beta.agents.sessions.stream(session.id, { input: 'two' }));
    const page = await (await h.svc.api(`/v1/agents/sessions/${session.id}/turns?limit=1`)).json();
    expect(page).toMatchObject({ object: 'list', has_more: true, first_id: page.data[0].id, last_id: page.data[0].id });
    const last = await (await h.svc.api(`/v1/agents/sessions/${session.id}/turns?limit=1&after=${page.data[0].id}`)).json();
    expect(last.has_more).toBe(false);
    const turns = await collect(h.client.beta.agents.sessions.turns.list(session.id));
    expect(turns.map((t) => t.id)).toEqual([page.data[0].id, last.data[0].id]);
    const items = await collect(h.client.beta.agents.sessions.items.list(session.id));
    expect((items[0] as { content: Array<{ text: string }> }).content[0].text).toBe('FAKE-REPLY: two');
  });

  it('8.14 routes /agents/sessions and /agents/environments/templates before /agents/{agent_id}', async () => {
    expect((await h.client.beta.agents.sessions.list()).data).toBeInstanceOf(Array);
    expect((await h.svc.api('/v1/agents/sessions')).status).toBe(200);
    expect(await (await h.svc.api('/v1/agents/environments/templates')).json()).toMatchObject({ object: 'list', data: [] });
    const agent = await h.client.beta.agents.create({ model: 'svc/demo/echo' });
    expect((await h.client.beta.agents.retrieve(agent.id)).id).toBe(agent.id);
  });

  it('8.15 refuses a reused Idempotency-Key with another body as 422 that the SDK does not retry', async () => {
    const session = await newSession();
    expect((await post(session.id, { events: [{ type: 'agent.session.input.cancel' }] }, { 'Idempotency-Key': 'k-8.15' })).status).toBe(204);
    const res = await post(session.id, { events: [message('different')] }, { 'Idempotency-Key': 'k-8.15' });
    expect(res.status).toBe(422);
    expect(res.headers.get('x-should-retry')).toBe('false');
  });

  it('8.16 accepts empty bodies for agent and session updates', async () => {
    const agent = await h.client.beta.agents.create({ model: 'svc/demo/echo', name: 'kept' });
    expect(await h.client.beta.agents.update(agent.id)).toMatchObject({ id: agent.id, name: 'kept' });
    const session = await h.client.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'none' }, metadata: { a: '1' } });
    expect(await h.client.beta.agents.sessions.update(session.id)).toMatchObject({ id: session.id, metadata: { a: '1' } });
  });

  it('8.17 reads a new session without input back as idle, also with a hosted environment', async () => {
    const agent = await h.client.beta.agents.create({ model: 'svc/demo/echo' });
    for (const environment of [{ type: 'none' as const }, { type: 'openai_hosted' as const }]) {
      const session = await h.client.beta.agents.sessions.create({ agent_id: agent.id, environment });
      expect(session.status).toBe('idle');
      expect((await h.client.beta.agents.sessions.retrieve(session.id)).status).toBe('idle');
    }
  });

  it('8.18 never returns session MCP secrets, while persisted agent MCP headers are echoed', async () => {
    const secret = 'sk-very-secret-authorization-value';
    const session = await h.client.beta.agents.sessions.create({
      environment: { type: 'none' },
      agent: {
        model: 'svc/demo/echo',
        tools: [{ type: 'mcp', server_label: 'private', transport: { type: 'http', server_url: 'https://mcp.example.com/mcp', authorization: secret, headers: { 'X-Secret': secret } } }],
      },
    });
    expect(session.agent.tools).toEqual([expect.objectContaining({ type: 'mcp', server_label: 'private', transport: { type: 'http', server_url: 'https://mcp.example.com/mcp' } })]);
    const everything = [JSON.stringify(session), JSON.stringify(await h.client.beta.agents.sessions.retrieve(session.id)), JSON.stringify(await h.client.beta.agents.sessions.list())];
    const replay = rawEvents(h, session.id, { 'Last-Event-ID': `evt_${session.id.split('-').at(-1)}_0` });
    await replay.until((f) => f.event === 'agent.session.created');
    await replay.close();
    everything.push(replay.text);
    for (const text of everything) expect(text).not.toContain(secret);
  });

  it('8.19 freezes the agent name in the session and applies overrides to that session only', async () => {
    const agent = await h.client.beta.agents.create({ model: 'svc/demo/echo', name: 'original', instructions: 'Saved.', tools: [weather] });
    const inherited = await h.client.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'none' } });
    const overridden = await h.client.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'none' }, agent: { instructions: 'Just here.', tools: null } });
    await h.client.beta.agents.update(agent.id, { name: 'renamed', instructions: 'Changed.' });
    expect((await h.client.beta.agents.sessions.retrieve(inherited.id)).agent).toMatchObject({ name: 'original', instructions: 'Saved.', tools: [expect.objectContaining({ name: 'get_weather' })] });
    expect((await h.client.beta.agents.sessions.retrieve(overridden.id)).agent).toMatchObject({ name: 'original', instructions: 'Just here.', tools: [] });
    expect(await h.client.beta.agents.retrieve(agent.id)).toMatchObject({ name: 'renamed', instructions: 'Changed.', tools: [expect.objectContaining({ name: 'get_weather' })] });
  });

  it('8.20 a session that spawned no subagents: its subagent list is an empty page, unknown subagents 404 (spawning: agents-subagents.test.ts)', async () => {
    const session = await newSession();
    expect(await h.client.beta.agents.sessions.subagents.list(session.id)).toMatchObject({ data: [] });
    expect((await h.client.beta.agents.sessions.subagents.retrieve('sub_x', { session_id: session.id }).catch((e) => e)).status).toBe(404);
    expect(await h.client.beta.agents.sessions.artifacts.list(session.id)).toMatchObject({ data: [] });
  });

  it('8.21 buffers events for a subscriber that stops reading, and a closed subscription does not cancel the turn', async () => {
    const session = await newSession();
    const res = await fetch(`${h.svc.url}/v1/agents/sessions/${session.id}/events`, { headers: { authorization: `Bearer ${h.svc.key}` } });
    const watcher = reader(await events(session.id));
    await send(session.id, 'DELTAS 300');
    await watcher.until((e) => e.type === 'agent.session.idle');
    // the first subscriber read nothing so far; everything is still there, in order
    const text = await new Promise<string>((resolve) => {
      let acc = '';
      const r = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      const pump = (): Promise<void> => r.read().then(({ value }) => {
        acc += value ?? '';
        if (acc.includes('event: agent.session.idle')) return void (r.cancel(), resolve(acc));
        return pump();
      });
      void pump();
    });
    // the worker joins the deltas that reach it in one turn of the event loop: all 300 are there, in order
    const deltas = [...text.matchAll(/event: agent\.session\.turn\.output_text\.delta\ndata: (.*)\n/g)].map((m) => (JSON.parse(m[1]) as { delta: string }).delta);
    expect(deltas.length).toBeGreaterThan(0);
    expect(deltas.join('')).toBe(Array.from({ length: 300 }, (_, i) => `d${i} `).join(''));
    const hangUp = reader(await events(session.id));
    await send(session.id, 'SLOW_DELTAS 5 30');
    await hangUp.until((e) => e.type === 'agent.session.turn.output_text.delta');
    await hangUp.close();
    const end = (await watcher.until(isTurnEnd)).at(-1)!;
    await watcher.close();
    expect(end.type).toBe('agent.session.turn.completed');
  });

  it('8.22 treats empty query values as absent', async () => {
    const res = await h.svc.api('/v1/agents/sessions?agent_id=&after=&order=&limit=2');
    expect(res.status).toBe(200);
    expect((await res.json()).object).toBe('list');
  });

  it('8.23 tags deleted objects with deleted: true and list items without `object`', async () => {
    const session = await newSession();
    await collect(h.client.beta.agents.sessions.stream(session.id, { input: 'tag me' }));
    const items = await collect(h.client.beta.agents.sessions.items.list(session.id));
    for (const item of items) expect(item).not.toHaveProperty('object');
    expect(await h.client.beta.agents.sessions.delete(session.id)).toEqual({ id: session.id, deleted: true, object: 'agent.session.deleted' });
    expect(await h.client.beta.agents.delete(session.agent.id)).toMatchObject({ deleted: true, object: 'agent.deleted' });
  });

  it('rejects input events that are not in the union with 400 naming the field', async () => {
    const session = await newSession();
    const err = await h.client.beta.agents.sessions.events.create(session.id, { events: [] }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.param).toBe('events');
  });
});
