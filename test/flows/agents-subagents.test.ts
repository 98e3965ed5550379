import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, FAKE_MODEL, isTurnEnd, rawEvents, reader, startAgentsHarness, textOf, type AgentsHarness } from '../support/agents.ts';
import { connect, createTestDatabase } from '../support/pg.ts';

/**
 * Subagents (issue 24 item 1), driven by the official `openai` 7.15.0 package: an agent with `multi_agent` lets its
 * model call `spawn_subagent`; the subagent runs a turn of its own (the fake provider answers it), its answer comes
 * back as the tool's output and the parent turn goes on. The subagent's object, events, turns and items are served
 * by the six subagent routes, the session's items stay the session's own conversation, and at most
 * `max_concurrent_subagents` subagents run at once.
 */
type Ev = { type: string; turn_id?: string | null; [key: string]: any };
const spawnLine = (task: string, name?: string) => `CALL_TOOL spawn_subagent ${JSON.stringify({ task, ...(name ? { name } : {}) })}`;

describe('subagents', () => {
  let h: AgentsHarness;

  beforeAll(async () => {
    h = await startAgentsHarness();
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('spawns a subagent through a tool call: its events on the session stream, its answer back to the parent turn, the six routes', async () => {
    const client = h.client;
    const agent = await client.beta.agents.create({ model: FAKE_MODEL, multi_agent: { enabled: true, max_concurrent_subagents: 2 } });
    expect(agent.multi_agent).toEqual({ enabled: true, max_concurrent_subagents: 2 });
    const session = await client.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'none' } });
    const events = (await collect(client.beta.agents.sessions.stream(session.id, { input: spawnLine('count the moons', 'scout') }))) as unknown as Ev[];

    const created = events.find((e) => e.type === 'agent.session.subagent.created')!;
    const closed = events.find((e) => e.type === 'agent.session.subagent.closed')!;
    expect(created.subagent).toMatchObject({ object: 'agent.session.subagent', status: 'active', closed_at: null, name: 'scout', parent_agent_id: agent.id });
    expect(created.subagent.instructions).toEqual([{ type: 'output_text', text: 'count the moons' }]);
    expect(created.subagent).not.toHaveProperty('session_id');
    const subId: string = created.subagent.id;
    expect(closed.subagent).toMatchObject({ id: subId, status: 'closed', opened_at: created.subagent.opened_at });
    expect(typeof closed.subagent.closed_at).toBe('number');

    // the root turn and the subagent's turn, told apart by subagent_id
    const turnsCreated = events.filter((e) => e.type === 'agent.session.turn.created');
    const root = turnsCreated.find((e) => e.turn.subagent_id === null)!;
    const sub = turnsCreated.find((e) => e.turn.subagent_id === subId)!;
    expect(turnsCreated).toHaveLength(2);
    const idx = (pred: (e: Ev) => boolean) => events.findIndex(pred);
    const order = [
      idx((e) => e === root),
      idx((e) => e === created),
      idx((e) => e === sub),
      idx((e) => e.type === 'agent.session.turn.completed' && e.turn_id === sub.turn_id),
      idx((e) => e === closed),
      idx((e) => e.type === 'agent.session.turn.completed' && e.turn_id === root.turn_id),
      events.length - 1,
    ];
    expect(order.every((i) => i >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(events.at(-1)!.type).toBe('agent.session.idle');
    // the subagent turn ended without a session idle of its own: one idle, at the end
    expect(events.filter((e) => e.type === 'agent.session.idle')).toHaveLength(1);

    // the subagent answered its task; its answer is the parent's tool output, and the parent turn went on
    expect(textOf(events.filter((e) => e.turn_id === sub.turn_id))).toBe('FAKE-REPLY: count the moons');
    expect(textOf(events.filter((e) => e.turn_id === root.turn_id))).toBe(`TOOL-RESULT-SEEN: ${JSON.stringify({ subagent_id: subId, output: 'FAKE-REPLY: count the moons' })}`);

    // the parent turn's items: the spawn call and the subagent's message
    const parentItems = events.filter((e) => e.type === 'agent.session.turn.item.added' && e.turn_id === root.turn_id).map((e) => e.item);
    expect(parentItems.map((i) => i.type)).toEqual(['message', 'create_subagent_call', 'agent_message', 'message']);
    expect(parentItems[1]).toMatchObject({ agent_id: subId, content: [{ type: 'output_text', text: 'count the moons' }], model: null, reasoning_effort: null });
    expect(parentItems[2]).toMatchObject({ sender_agent_id: subId, recipient_agent_id: agent.id, content: [{ type: 'output_text', text: 'FAKE-REPLY: count the moons' }] });
    expect(events.find((e) => e.type === 'agent.session.turn.item.done' && e.item.type === 'create_subagent_call')!.item.status).toBe('completed');
    // the spawn tool is not reported as an MCP call
    expect(events.some((e) => e.type === 'agent.session.turn.item.added' && e.item.type === 'mcp_call')).toBe(false);

    // route 21, 20: list and retrieve
    const listed = await client.beta.agents.sessions.subagents.list(session.id);
    expect(listed.data).toEqual([{ ...closed.subagent, session_id: session.id }]);
    expect(await client.beta.agents.sessions.subagents.retrieve(subId, { session_id: session.id })).toEqual(listed.data[0]);

    // route 24, 23: the subagent's turns
    const subTurns = await client.beta.agents.sessions.subagents.turns.list(subId, { session_id: session.id });
    expect(subTurns.data.map((t) => [t.id, t.subagent_id, t.status])).toEqual([[sub.turn_id, subId, 'completed']]);
    expect(await client.beta.agents.sessions.subagents.turns.retrieve(sub.turn_id!, { session_id: session.id, subagent_id: subId })).toEqual(subTurns.data[0]);

    // route 22, 25: the subagent's items (its own conversation), all turns and one turn
    const subItems = await client.beta.agents.sessions.subagents.items.list(subId, { session_id: session.id, order: 'asc' });
    expect(subItems.data.map((i: any) => [i.type, i.role, i.content])).toEqual([
      ['message', 'user', [{ type: 'input_text', text: 'count the moons' }]],
      ['message', 'assistant', [{ type: 'output_text', text: 'FAKE-REPLY: count the moons' }]],
    ]);
    const turnItems = await client.beta.agents.sessions.subagents.turns.items.list(sub.turn_id!, { session_id: session.id, subagent_id: subId, order: 'asc' });
    expect(turnItems.data).toEqual(subItems.data);

    // the session's turns include the subagent's; its items are the session's conversation only
    const allTurns = await client.beta.agents.sessions.turns.list(session.id, { order: 'asc' });
    expect(allTurns.data.map((t) => t.subagent_id)).toEqual([null, subId]);
    // the session's usage counts the subagent's turn as well as its own
    const totals = allTurns.data.map((t) => t.usage?.total_tokens ?? 0);
    expect(totals.every((n) => n > 0)).toBe(true);
    expect((await client.beta.agents.sessions.retrieve(session.id)).usage?.total_tokens).toBe(totals[0] + totals[1]);
    const sessionItems = await client.beta.agents.sessions.items.list(session.id, { order: 'asc' });
    expect(sessionItems.data.map((i) => i.type)).toEqual(['message', 'create_subagent_call', 'agent_message', 'message']);
    expect(sessionItems.data.every((i) => i.turn_id === root.turn_id)).toBe(true);

    // another organisation sees none of it
    const other = h.clientFor(await h.otherOrg('subagents-other-org'));
    await expect(other.beta.agents.sessions.subagents.list(session.id)).rejects.toMatchObject({ status: 404 });
    await expect(other.beta.agents.sessions.subagents.retrieve(subId, { session_id: session.id })).rejects.toMatchObject({ status: 404 });
    await expect(other.beta.agents.sessions.subagents.items.list(subId, { session_id: session.id })).rejects.toMatchObject({ status: 404 });
    // unknown ids, and a root turn asked for under a subagent, are 404s
    await expect(client.beta.agents.sessions.subagents.retrieve('subagent_nope', { session_id: session.id })).rejects.toMatchObject({ status: 404 });
    await expect(client.beta.agents.sessions.subagents.items.list('subagent_nope', { session_id: session.id })).rejects.toMatchObject({ status: 404 });
    await expect(client.beta.agents.sessions.subagents.turns.retrieve(root.turn_id!, { session_id: session.id, subagent_id: subId })).rejects.toMatchObject({ status: 404 });
    await expect(client.beta.agents.sessions.subagents.turns.items.list(root.turn_id!, { session_id: session.id, subagent_id: subId })).rejects.toMatchObject({ status: 404 });

    // send_subagent_input reopens the closed subagent on its own conversation: `.active`, one more turn, `.closed`
    const again = (await collect(
      client.beta.agents.sessions.stream(session.id, { input: `CALL_TOOL send_subagent_input ${JSON.stringify({ subagent_id: subId, message: 'and the rings?' })}` }),
    )) as unknown as Ev[];
    const subEvents = again.filter((e) => e.type.startsWith('agent.session.subagent.'));
    expect(subEvents.map((e) => [e.type, e.subagent.status])).toEqual([
      ['agent.session.subagent.active', 'active'],
      ['agent.session.subagent.closed', 'closed'],
    ]);
    expect(subEvents[0].subagent).toMatchObject({ closed_at: null, opened_at: created.subagent.opened_at });
    const resumedTurn = again.find((e) => e.type === 'agent.session.turn.created' && e.turn.subagent_id === subId)!;
    expect(textOf(again.filter((e) => e.turn_id === resumedTurn.turn_id))).toBe('FAKE-REPLY: and the rings?');
    // the subagent's model saw its earlier exchange: the same conversation
    const resumedRequest = h.fake.requests.findLast((r) => JSON.stringify(r.body).includes('and the rings?') && !JSON.stringify(r.body).includes('CALL_TOOL send_subagent_input'))!;
    expect(JSON.stringify(resumedRequest.body)).toContain('FAKE-REPLY: count the moons');
    expect((await client.beta.agents.sessions.subagents.turns.list(subId, { session_id: session.id })).data).toHaveLength(2);
    expect((await client.beta.agents.sessions.subagents.items.list(subId, { session_id: session.id })).data).toHaveLength(4);
    const items2 = (await client.beta.agents.sessions.items.list(session.id, { order: 'asc' })).data;
    expect(items2.map((i) => i.type)).toEqual(['message', 'create_subagent_call', 'agent_message', 'message', 'message', 'send_subagent_input_call', 'agent_message', 'message']);
  });

  it('runs at most max_concurrent_subagents at once: three spawns with a cap of one queue and all complete', async () => {
    const client = h.client;
    const agent = await client.beta.agents.create({ model: FAKE_MODEL, multi_agent: { enabled: true, max_concurrent_subagents: 1 } });
    const session = await client.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'none' } });
    // Each subagent's model request is held (fake provider `HOLD <name>`) until the test lets it go. The parent's
    // prompt spells HOLD as \u0048OLD inside the JSON arguments, so only the subagents' prompts (parsed) hold.
    const names = ['one', 'two', 'three'];
    const prompt = names.map((n) => `CALL_TOOL spawn_subagent {"task":"\\u0048OLD ${n}","name":"${n}"}`).join('\n');
    const stream = reader(await client.beta.agents.sessions.events.stream(session.id));
    await client.beta.agents.sessions.events.create(session.id, {
      events: [{ type: 'agent.session.input.message', input: [{ role: 'user', content: [{ type: 'input_text', text: prompt }] }] }],
    });

    // A subagent is let go once it runs and all three calls are announced (so the other two are waiting, not unsent).
    let calls = 0;
    let active = 0;
    let maxActive = 0;
    const running: string[] = [];
    const lifecycle: string[] = [];
    let rootTurn: string | undefined;
    let rootEnded = false;
    const releaseReady = () => {
      if (calls === 3) for (const name of running.splice(0)) h.fake.release(name);
    };
    const seen = (await stream.until((raw) => {
      const e = raw as unknown as Ev;
      if (e.type === 'agent.session.turn.created' && e.turn.subagent_id === null) rootTurn = e.turn_id!;
      if (e.type === 'agent.session.turn.item.added' && e.item.type === 'create_subagent_call') calls++;
      if (e.type === 'agent.session.subagent.created') {
        active++;
        maxActive = Math.max(maxActive, active);
        lifecycle.push(`created:${e.subagent.name}`);
        running.push(e.subagent.name);
      }
      if (e.type === 'agent.session.subagent.closed') {
        active--;
        lifecycle.push(`closed:${e.subagent.name}`);
      }
      releaseReady();
      if (isTurnEnd(e) && e.turn_id === rootTurn) rootEnded = true;
      return rootEnded && e.type === 'agent.session.idle';
    })) as unknown as Ev[];
    await stream.close();

    expect(calls).toBe(3);
    expect(maxActive).toBe(1);
    // strictly one after another, every one created and closed
    expect(lifecycle).toHaveLength(6);
    for (let i = 0; i < 6; i += 2) {
      expect(lifecycle[i]).toMatch(/^created:/);
      expect(lifecycle[i + 1]).toBe(lifecycle[i].replace('created', 'closed'));
    }
    expect(lifecycle.filter((l) => l.startsWith('created:')).map((l) => l.slice(8)).sort()).toEqual([...names].sort());
    expect(seen.find((e) => e.type === 'agent.session.turn.completed' && e.turn_id === rootTurn)).toBeDefined();

    const subs = await client.beta.agents.sessions.subagents.list(session.id);
    expect(subs.data.map((s) => s.status)).toEqual(['closed', 'closed', 'closed']);
    for (const s of subs.data) {
      const items = await client.beta.agents.sessions.subagents.items.list(s.id, { session_id: session.id, order: 'asc' });
      expect(items.data.map((i: any) => i.content[0].text)).toEqual([`HOLD ${s.name}`, `FAKE-REPLY: HOLD ${s.name}`]);
    }
    // the session's own items: the three calls and their answers, no subagent conversation
    const own = (await client.beta.agents.sessions.items.list(session.id, { order: 'asc' })).data;
    expect(own.filter((i) => i.type === 'create_subagent_call')).toHaveLength(3);
    expect(own.filter((i) => i.type === 'agent_message')).toHaveLength(3);
    expect(own.every((i) => i.turn_id === rootTurn)).toBe(true);
    expect((await client.beta.agents.sessions.turns.list(session.id)).data.filter((t) => t.subagent_id !== null)).toHaveLength(3);
  });

  it('offers no subagent tool to an agent without multi_agent', async () => {
    const session = await h.client.beta.agents.sessions.create({ agent: { model: FAKE_MODEL }, environment: { type: 'none' } });
    expect(session.agent.multi_agent).toEqual({ enabled: false, max_concurrent_subagents: null });
    const events = (await collect(h.client.beta.agents.sessions.stream(session.id, { input: spawnLine('count the moons') }))) as unknown as Ev[];
    expect(events.some((e) => e.type.startsWith('agent.session.subagent.'))).toBe(false);
    expect((await h.client.beta.agents.sessions.subagents.list(session.id)).data).toEqual([]);
    // the model asked for a tool it does not have: no spawn happened, the turn still ended
    expect(events.filter(isTurnEnd)).toHaveLength(1);
  });

  it('cancelling the parent turn cancels the running subagent turn and closes the subagent', async () => {
    const client = h.client;
    const agent = await client.beta.agents.create({ model: FAKE_MODEL, multi_agent: { enabled: true } });
    const session = await client.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'none' } });
    const stream = reader(await client.beta.agents.sessions.events.stream(session.id));
    await client.beta.agents.sessions.events.create(session.id, {
      events: [{ type: 'agent.session.input.message', input: [{ role: 'user', content: [{ type: 'input_text', text: 'CALL_TOOL spawn_subagent {"task":"\\u0048OLD never"}' }] }] }],
    });
    const before = (await stream.until((e) => e.type === 'agent.session.subagent.created')) as unknown as Ev[];
    const rootTurn = before.find((e) => e.type === 'agent.session.turn.created' && e.turn.subagent_id === null)!.turn_id;
    // the subagent's model request has arrived and is held
    await h.fake.when(() => h.fake.requests.find((r) => JSON.stringify(r.body).includes('HOLD never')));
    await client.beta.agents.sessions.events.create(session.id, { events: [{ type: 'agent.session.input.cancel' }] });

    let rootEnded = false;
    let idleAfterRoot = false;
    let subClosed = false;
    const after = (await stream.until((raw) => {
      const e = raw as unknown as Ev;
      if (isTurnEnd(e) && e.turn_id === rootTurn) rootEnded = true;
      if (rootEnded && e.type === 'agent.session.idle') idleAfterRoot = true;
      if (e.type === 'agent.session.subagent.closed') subClosed = true;
      return idleAfterRoot && subClosed;
    })) as unknown as Ev[];
    await stream.close();
    expect(after.find((e) => isTurnEnd(e) && e.turn_id === rootTurn)!.type).toBe('agent.session.turn.cancelled');
    const subId = before.find((e) => e.type === 'agent.session.subagent.created')!.subagent.id;
    const [subTurn] = (await client.beta.agents.sessions.subagents.turns.list(subId, { session_id: session.id })).data;
    expect(subTurn.status).toBe('cancelled');
    expect((await client.beta.agents.sessions.subagents.retrieve(subId, { session_id: session.id })).status).toBe('closed');
    expect((await client.beta.agents.sessions.retrieve(session.id)).status).toBe('idle');
    // the held model request of the subagent was abandoned by its cancelled run
    await h.fake.when(() => h.fake.requests.find((r) => JSON.stringify(r.body).includes('HOLD never') && r.clientClosedEarly));
  });
});

describe('a conductor that stops while a subagent runs', () => {
  it('ends the subagent turn and closes the subagent, then ends the parent turn, on the open stream', async () => {
    const h = await startAgentsHarness();
    try {
      const agent = await h.client.beta.agents.create({ model: FAKE_MODEL, multi_agent: { enabled: true } });
      const session = await h.client.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'none' } });
      const stream = reader(await h.client.beta.agents.sessions.events.stream(session.id));
      await h.client.beta.agents.sessions.events.create(session.id, {
        events: [{ type: 'agent.session.input.message', input: [{ role: 'user', content: [{ type: 'input_text', text: 'CALL_TOOL spawn_subagent {"task":"\\u0048OLD forever"}' }] }] }],
      });
      await stream.until((e) => e.type === 'agent.session.subagent.created');
      await h.fake.when(() => h.fake.requests.find((r) => JSON.stringify(r.body).includes('HOLD forever')));
      const stopping = h.svc.stop();
      const tail = (await stream.until(() => false)) as unknown as Ev[]; // until the server ends the stream
      await stopping;
      const at = (pred: (e: Ev) => boolean) => tail.findIndex(pred);
      const subEnd = at((e) => isTurnEnd(e) && typeof e.turn.subagent_id === 'string');
      const closed = at((e) => e.type === 'agent.session.subagent.closed');
      const rootEnd = at((e) => isTurnEnd(e) && e.turn.subagent_id === null);
      const idle = at((e) => e.type === 'agent.session.idle');
      const seen = tail.map((e) => `${e.type}${e.turn ? `(${e.turn.subagent_id ? 'sub' : 'root'})` : ''}`).join(' ');
      expect(tail[subEnd]?.type, seen).toBe('agent.session.turn.failed');
      expect(tail[rootEnd]?.type).toBe('agent.session.turn.failed');
      expect(closed).toBeGreaterThan(subEnd);
      expect(idle).toBeGreaterThan(rootEnd);
      expect(tail.filter(isTurnEnd)).toHaveLength(2);
    } finally {
      await h.stop().catch(() => {});
    }
  });
});

describe('a conductor that went away without stopping while a subagent ran', () => {
  it('at the next boot fails the subagent turn it left running and closes the subagent, on the session stream', async () => {
    const db = await createTestDatabase();
    const admin = connect(db.adminUrl, { max: 1 });
    let h = await startAgentsHarness({}, { databaseUrl: db.url });
    try {
      const agent = await h.client.beta.agents.create({ model: FAKE_MODEL, multi_agent: { enabled: true } });
      const session = await h.client.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'none' } });
      const events = (await collect(h.client.beta.agents.sessions.stream(session.id, { input: spawnLine('count the moons') }))) as unknown as Ev[];
      const subId: string = events.find((e) => e.type === 'agent.session.subagent.created')!.subagent.id;
      const subTurn = events.find((e) => e.type === 'agent.session.turn.created' && e.turn.subagent_id === subId)!.turn_id!;
      const lastEventId = (events.at(-1) as unknown as { event_id: string }).event_id;
      await h.svc.stop();
      // what a conductor that died mid-turn leaves behind: the subagent active, its turn running under an owner with no lease
      await admin`update agent_turns set status = 'in_progress', completed_at = null, owner_id = 'gone-conductor' where id = ${subTurn}`;
      await admin`update agent_subagents set status = 'active', closed_at = null where id = ${subId}`;

      await h.fake.close();
      h = await startAgentsHarness({}, { databaseUrl: db.url });
      const raw = rawEvents(h, session.id, { 'last-event-id': lastEventId });
      await raw.until((f) => f.event === 'agent.session.subagent.closed');
      await raw.close();
      const after = raw.frames.map((f) => f.data);
      expect(after.find((e) => e.type === 'agent.session.turn.failed')).toMatchObject({ turn_id: subTurn, turn: { status: 'failed', subagent_id: subId, error: { code: 'internal_error' } } });
      expect(await h.client.beta.agents.sessions.subagents.retrieve(subId, { session_id: session.id })).toMatchObject({ status: 'closed' });
      expect(await h.client.beta.agents.sessions.subagents.turns.retrieve(subTurn, { session_id: session.id, subagent_id: subId })).toMatchObject({ status: 'failed' });
    } finally {
      await h.stop().catch(() => {});
      await admin.end({ timeout: 1 });
      await db.drop();
    }
  });
});
