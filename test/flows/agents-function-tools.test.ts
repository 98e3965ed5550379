import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintRunToken } from '../../src/modules/conductor/identity/index.ts';
import { collect, FAKE_MODEL, isTurnEnd, reader, startAgentsHarness, textOf, type AgentsHarness } from '../support/agents.ts';
import { APP_ROLE, connect, createTestDatabase } from '../support/pg.ts';

/**
 * Function tools under a failing database: behind the endpoint the failure is a server error, not a 404 that would
 * tell the worker its session is gone (only a run that does not exist is a 404); and a turn waiting on a function
 * call outlives the outage, its run having gone on all along.
 */
const RUN_TOKEN_SECRET = 'agents-errors-run-token-secret-0123456789';

describe('function tools under a failing database', () => {
  let h: AgentsHarness;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let admin: ReturnType<typeof connect>;

  beforeAll(async () => {
    db = await createTestDatabase();
    admin = connect(db.adminUrl, { max: 1 });
    // short keep-alives: the turn engine re-reads its run's row at each quiet tick
    h = await startAgentsHarness({ SVC_RUN_TOKEN_SECRET: RUN_TOKEN_SECRET, SVC_SSE_KEEPALIVE_MS: '100' }, { databaseUrl: db.url });
  });
  afterAll(async () => {
    await h?.stop();
    await admin?.end({ timeout: 1 });
    await db?.drop();
  });

  it('answers a database failure behind the function-tool endpoint with a server error, and a missing run with 404', async () => {
    const agent = await h.client.beta.agents.create({ model: FAKE_MODEL, tools: [{ type: 'function', name: 'lookup', description: 'Look something up', parameters: { type: 'object', properties: {} } }] });
    const session = await h.client.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'none' } });
    // the run is held running (the endpoint serves running runs only) until the checks are done
    const turn = collect(h.client.beta.agents.sessions.stream(session.id, { input: 'HOLD fnerrors hello' }));
    await h.fake.when(() => h.fake.requests.some((r) => JSON.stringify(r.body ?? {}).includes('HOLD fnerrors')));
    const [run] = await admin<{ id: string }[]>`select id from runs where session_id = ${session.id}`;
    const call = async (runId: string) => {
      const token = await mintRunToken(new TextEncoder().encode(RUN_TOKEN_SECRET), { tenantId: 'default', runId });
      return fetch(`${h.svc.url}/api/agent-sessions/${session.id}/function-tools/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
      });
    };

    const listed = await call(run.id);
    expect(listed.status).toBe(200);
    expect((await listed.json()).result.tools.map((t: { name: string }) => t.name)).toEqual(['lookup']);
    expect((await call('run_doesnotexist')).status).toBe(404);

    // The runs table becomes unreadable for the application's role: a real database error on the run lookup.
    await admin.unsafe(`REVOKE ALL ON runs FROM ${APP_ROLE}`);
    try {
      const failed = await call(run.id);
      expect(failed.status).toBe(500);
      expect(await failed.json()).toEqual({ error: 'internal error' });
    } finally {
      await admin.unsafe(`GRANT ALL ON runs TO ${APP_ROLE}`);
    }
    expect((await call(run.id)).status).toBe(200);
    h.fake.release('fnerrors');
    await turn;
  });

  it('keeps a turn that waits on a function call while reading its run fails, and completes it once answered', async () => {
    const agent = await h.client.beta.agents.create({ model: FAKE_MODEL, tools: [{ type: 'function', name: 'get_weather', description: 'The weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }] });
    const session = await h.client.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'none' } });
    const stream = reader(await h.client.beta.agents.sessions.events.stream(session.id));
    await h.client.beta.agents.sessions.events.create(session.id, {
      events: [{ type: 'agent.session.input.message', input: [{ role: 'user', content: [{ type: 'input_text', text: 'CALL_TOOL get_weather {"city":"Oslo"}' }] }] }],
    });
    const added = (await stream.until((e) => e.type === 'agent.session.turn.item.added' && (e as any).item.type === 'function_call')).at(-1) as any;

    const rollbacks = async () => Number((await admin<{ n: string }[]>`select xact_rollback as n from pg_stat_database where datname = current_database()`)[0].n);
    const before = await rollbacks();
    await admin.unsafe(`REVOKE ALL ON runs FROM ${APP_ROLE}`);
    try {
      // wait until the engine's reads of the run have failed several times (each one a rolled-back transaction)
      const deadline = Date.now() + 20_000;
      while ((await rollbacks()) < before + 3 && Date.now() < deadline) {
        await admin`select pg_stat_clear_snapshot()`;
        await new Promise((r) => setImmediate(r));
      }
      expect(await rollbacks()).toBeGreaterThanOrEqual(before + 3);
    } finally {
      await admin.unsafe(`GRANT ALL ON runs TO ${APP_ROLE}`);
    }

    const answered = await h.client.beta.agents.sessions.events.create(session.id, {
      events: [{ type: 'agent.session.input.tool_result', turn_id: added.turn_id, call_id: added.item.call_id, success: true, output: 'mild' }],
    }).then(() => 'accepted', (e: { status?: number }) => e.status);
    expect(answered).toBe('accepted');
    const rest = await stream.until((e) => e.type === 'agent.session.idle');
    await stream.close();
    expect(rest.filter(isTurnEnd).map((e) => e.type)).toEqual(['agent.session.turn.completed']);
    expect(textOf(rest)).toBe('TOOL-RESULT-SEEN: mild');
  });
});
