import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, FAKE_MODEL, isTurnEnd, startAgentsHarness, type AgentsHarness } from '../support/agents.ts';
import { connect, createTestDatabase } from '../support/pg.ts';

/**
 * Two conductor replicas (two in-process svc instances) on one PostgreSQL database. A session read or written on
 * replica B while replica A drives its turn must not end that turn: the turn is A's as long as A is alive, even in
 * the moments when it has no running run (before its first run exists, between two runs).
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
        events: [{ type: 'agent.session.input.message', input: [{ role: 'user', content: [{ type: 'input_text', text: 'hello from A' }] }] }],
      });
      const deadline = Date.now() + 20_000;
      const activeTurn = async () => (await admin<{ active_turn_id: string | null }[]>`select active_turn_id from agent_sessions where id = ${session.id}`)[0].active_turn_id;
      while (!(await activeTurn()) && Date.now() < deadline) await new Promise((r) => setImmediate(r));
      expect(await activeTurn()).toMatch(/^turn_/);

      // B reads the session: the turn is A's and still in progress
      expect((await b.client.beta.agents.sessions.retrieve(session.id)).status).toBe('in_progress');
      // B is asked to add input: it refuses (the turn is driven elsewhere) rather than ending the turn
      const refused = await b.client.beta.agents.sessions.events
        .create(session.id, { events: [{ type: 'agent.session.input.message', input: [{ role: 'user', content: [{ type: 'input_text', text: 'hello from B' }] }] }] })
        .catch((e: { status?: number }) => e);
      expect((refused as { status?: number }).status).toBe(409);

      await release();
      await admitted;
    } finally {
      await release();
    }
    const events = await seen;
    expect(events.filter((e) => isTurnEnd(e)).map((e) => e.type)).toEqual(['agent.session.turn.completed']);
    const turns = await a.client.beta.agents.sessions.turns.list(session.id);
    expect(turns.data.map((t) => t.status)).toEqual(['completed']);
    expect((await b.client.beta.agents.sessions.retrieve(session.id)).status).toBe('idle');
  });
});
