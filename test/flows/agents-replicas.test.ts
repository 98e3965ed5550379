import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, FAKE_MODEL, isTurnEnd, reader, startAgentsHarness, textOf, type AgentsHarness } from '../support/agents.ts';
import { connect, createTestDatabase } from '../support/pg.ts';

/**
 * Two conductor replicas (two in-process svc instances) on one PostgreSQL database. A session read or written on
 * replica B while replica A drives its turn must not end that turn: the turn is A's as long as A is alive, even in
 * the moments when it has no running run (before its first run exists, between two runs). Input posted to B (a
 * message, a tool result) is handed to A through PostgreSQL and joins A's turn.
 */
describe('agent session turns across conductor replicas', () => {
  let a: AgentsHarness;
  let b: AgentsHarness;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let admin: ReturnType<typeof connect>;
  const dirs: string[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    admin = connect(db.adminUrl, { max: 2 });
    // replicas of one deployment share their secrets; each runs its own in-process runner on its own folder
    const replica = () => {
      const dir = mkdtempSync(join(tmpdir(), 'svc-replica-'));
      dirs.push(dir);
      return startAgentsHarness(
        { SVC_DATA_DIR: dir, SVC_SECRETS_KEY: 'replica-secrets-key-0123456789abcdef', SVC_RUN_TOKEN_SECRET: 'replica-run-token-0123456789abcdef', SVC_INTERNAL_TOKEN: 'replica-internal-token' },
        { databaseUrl: db.url },
      );
    };
    a = await replica();
    b = await replica();
  });
  afterAll(async () => {
    await b?.stop();
    await a?.stop();
    await admin?.end({ timeout: 1 });
    await db?.drop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it("leaves a turn replica A drives alone while its first run is being created, when B reads or writes the session", async () => {
    const agent = await a.client.beta.agents.create({ model: FAKE_MODEL });
    const session = await a.client.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'none' } });
    const stream = a.client.beta.agents.sessions.events.stream(session.id);
    const seen = collect(await stream, isTurnEnd);

    // Hold A between "turn started" and "run created": inserts into runs wait for this lock, reads do not.
    const reserved = await admin.reserve();
    await reserved`BEGIN`;
    await reserved`LOCK TABLE runs IN EXCLUSIVE MODE`;
    let released = false;
    const release = async () => {
      if (released) return;
      released = true;
      await reserved`COMMIT`;
      reserved.release();
    };
    try {
      const admitted = a.client.beta.agents.sessions.events.create(session.id, {
        // its first run is held at the model until B's input has joined the turn (a run that ended first would leave
        // B's input to a turn of its own)
        events: [{ type: 'agent.session.input.message', input: [{ role: 'user', content: [{ type: 'input_text', text: 'hello from A HOLD replicajoin' }] }] }],
      });
      const deadline = Date.now() + 20_000;
      const activeTurn = async () => (await admin<{ active_turn_id: string | null }[]>`select active_turn_id from agent_sessions where id = ${session.id}`)[0].active_turn_id;
      while (!(await activeTurn()) && Date.now() < deadline) await new Promise((r) => setImmediate(r));
      expect(await activeTurn()).toMatch(/^turn_/);

      // B reads the session: the turn is A's and still in progress
      expect((await b.client.beta.agents.sessions.retrieve(session.id)).status).toBe('in_progress');
      // B is asked to add input: it hands it to A through PostgreSQL (never 409), and it joins A's running turn
      const joined = b.client.beta.agents.sessions.events.create(session.id, {
        events: [{ type: 'agent.session.input.message', input: [{ role: 'user', content: [{ type: 'input_text', text: 'hello from B' }] }] }],
      });

      await release();
      await admitted;
      await joined;
    } finally {
      await release();
      a.fake.release('replicajoin');
    }
    const events = await seen;
    expect(events.filter((e) => isTurnEnd(e)).map((e) => e.type)).toEqual(['agent.session.turn.completed']);
    const turns = await a.client.beta.agents.sessions.turns.list(session.id);
    expect(turns.data.map((t) => t.status)).toEqual(['completed']);
    expect((await b.client.beta.agents.sessions.retrieve(session.id)).status).toBe('idle');
    // both messages are the one turn's, and the model saw B's
    const userTexts = events.filter((e: any) => e.type === 'agent.session.turn.item.added' && e.item.type === 'message' && e.item.role === 'user').map((e: any) => e.item.content[0].text);
    expect(userTexts).toEqual(['hello from A HOLD replicajoin', 'hello from B']);
    expect(new Set(events.filter((e: any) => e.turn_id).map((e: any) => e.turn_id)).size).toBe(1);
    expect(JSON.stringify(a.fake.requests.at(-1)?.body)).toContain('hello from B');
  });

  it("hands a tool result posted to replica B to the turn replica A drives, which completes", async () => {
    const agent = await a.client.beta.agents.create({
      model: FAKE_MODEL,
      tools: [{ type: 'function', name: 'get_weather', description: 'The weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }],
    });
    const session = await a.client.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'none' } });
    const stream = reader(await a.client.beta.agents.sessions.events.stream(session.id));
    await a.client.beta.agents.sessions.events.create(session.id, {
      events: [{ type: 'agent.session.input.message', input: [{ role: 'user', content: [{ type: 'input_text', text: 'CALL_TOOL get_weather {"city":"Oslo"}' }] }] }],
    });
    // the call is announced, then the session moves to requires_action (its event follows the item's)
    const announced = (await stream.until((e: any) => e.type === 'agent.session.requires_action')) as any[];
    const call = announced.find((e) => e.type === 'agent.session.turn.item.added' && e.item.type === 'function_call');
    expect((await b.client.beta.agents.sessions.retrieve(session.id)).status).toBe('requires_action');

    // an unknown call is refused by the driver, and B answers with the driver's 400
    const unknown = await b.client.beta.agents.sessions.events
      .create(session.id, { events: [{ type: 'agent.session.input.tool_result', turn_id: call.turn_id, call_id: 'call_nope', success: true, output: 'x' }] })
      .catch((e: { status?: number; message?: string }) => e);
    expect((unknown as { status?: number }).status).toBe(400);
    expect((unknown as { message?: string }).message).toContain('Unknown pending tool call: call_nope');

    await b.client.beta.agents.sessions.events.create(session.id, {
      events: [{ type: 'agent.session.input.tool_result', turn_id: call.turn_id, call_id: call.item.call_id, success: true, output: 'sunny, 21 C' }],
    });
    const rest = await stream.until(isTurnEnd);
    await stream.close();
    expect(rest.at(-1)!.type).toBe('agent.session.turn.completed');
    expect(textOf(rest as any)).toContain('TOOL-RESULT-SEEN: sunny, 21 C');
    const left = await admin<{ n: string }[]>`select count(*)::text as n from agent_session_inbox`;
    expect(left[0].n).toBe('0');
  });
});
