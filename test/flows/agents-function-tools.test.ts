import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintRunToken } from '../../src/modules/conductor/identity/index.ts';
import { collect, FAKE_MODEL, startAgentsHarness, type AgentsHarness } from '../support/agents.ts';
import { APP_ROLE, connect, createTestDatabase } from '../support/pg.ts';

/**
 * The function-tool endpoint under a failing database: the failure is a server error, not a 404 that would tell the
 * worker its session is gone; only a run that does not exist is a 404.
 */
const RUN_TOKEN_SECRET = 'agents-errors-run-token-secret-0123456789';

describe('the function-tool endpoint', () => {
  let h: AgentsHarness;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let admin: ReturnType<typeof connect>;

  beforeAll(async () => {
    db = await createTestDatabase();
    admin = connect(db.adminUrl, { max: 1 });
    h = await startAgentsHarness({ SVC_RUN_TOKEN_SECRET: RUN_TOKEN_SECRET }, { databaseUrl: db.url });
  });
  afterAll(async () => {
    await h?.stop();
    await admin?.end({ timeout: 1 });
    await db?.drop();
  });

  it('answers a database failure behind the function-tool endpoint with a server error, and a missing run with 404', async () => {
    const agent = await h.client.beta.agents.create({ model: FAKE_MODEL, tools: [{ type: 'function', name: 'lookup', description: 'Look something up', parameters: { type: 'object', properties: {} } }] });
    const session = await h.client.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'none' } });
    await collect(h.client.beta.agents.sessions.stream(session.id, { input: 'hello' }));
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
  });
});
