import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { mintRunToken } from '../../src/modules/conductor/identity/index.ts';
import { FAKE_MODEL, isTurnEnd, reader, startAgentsHarness, textOf, type AgentsHarness } from '../support/agents.ts';
import { freePort } from '../support/listen.ts';
import { createTestDatabase } from '../support/pg.ts';
import { startTestSvc, type TestSvc } from '../support/svc.ts';

/**
 * A /v1 run keeps its function tools past its first run token: with tokens that live 2 s (SVC_RUN_TOKEN_TTL_S) and a
 * 1 s turn deadline, a run whose model calls a function tool only after a token minted after the run's start, as long
 * as the run's own tokens ever lived (the TTL plus the deadline), has expired still gets its call to the client and
 * the client's answer: the runner calls the function-tool endpoint with the run's token of the moment. Once on the
 * all-in-one server and once with conductor and runner apart. The endpoint serves running runs only: the token of a
 * run that ended is refused, however long it would still live.
 *
 * No test waits on a clock: the model's answer is held until the conductor refuses that later token.
 */
const TTL_S = 2;
const DEADLINE_MS = 1000;
const SECRET = 'agents-function-tool-token-secret-0123456789';
const KEY = new TextEncoder().encode(SECRET);
const INTERNAL_TOKEN = 'agents-function-tool-token-internal';
const ENV = { SVC_RUN_TOKEN_TTL_S: String(TTL_S), SVC_RUN_TOKEN_SECRET: SECRET, SVC_AGENT_TURN_DEADLINE_MS: String(DEADLINE_MS) };

const harnesses: AgentsHarness[] = [];
const stops: Array<() => Promise<void>> = [];
const dbs: Array<Awaited<ReturnType<typeof createTestDatabase>>> = [];
afterAll(async () => {
  for (const h of harnesses) await h.stop().catch(() => {});
  for (const stop of stops.reverse()) await stop().catch(() => {});
  for (const db of dbs) await db.drop().catch(() => {});
});

const callEndpoint = (svc: TestSvc, sessionId: string, token: string) =>
  fetch(`${svc.url}/api/agent-sessions/${sessionId}/function-tools/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });

/** Waits until `token` is refused for having expired: every token minted before it that lived as long has too. */
async function expiredBy(svc: TestSvc, token: string): Promise<void> {
  await vi.waitFor(
    async () => {
      const res = await svc.api('/api/whoami', { key: token });
      expect(res.status).toBe(401);
    },
    { timeout: 20_000, interval: 100 },
  );
}

async function runIdOf(svc: TestSvc, sessionId: string): Promise<string> {
  const runs = (await (await svc.api('/api/runs')).json()) as Array<{ id: string; subTask: { sessionId?: string } }>;
  return runs.find((r) => r.subTask.sessionId === sessionId)!.id;
}

/** A turn whose model calls the function tool `lookup` only once the run's first tokens have expired; the client answers it. */
async function callsPastItsFirstToken(h: AgentsHarness, hold: string): Promise<void> {
  const agent = await h.client.beta.agents.create({ model: FAKE_MODEL, tools: [{ type: 'function', name: 'lookup', description: 'Look something up', parameters: { type: 'object', properties: {} } }] });
  const session = await h.client.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'none' } });
  const stream = reader(await h.client.beta.agents.sessions.events.stream(session.id));
  await h.client.beta.agents.sessions.events.create(session.id, { events: [{ type: 'agent.session.input.message', input: [{ role: 'user', content: [{ type: 'input_text', text: `HOLD ${hold} CALL_TOOL lookup {}` }] }] }] });
  // the model was asked: the run's tokens were minted before this one, and live no longer than it
  await h.fake.when(() => h.fake.requests.some((r) => JSON.stringify(r.body ?? {}).includes(`HOLD ${hold}`)));
  const runId = await runIdOf(h.svc, session.id);
  const running = await callEndpoint(h.svc, session.id, await mintRunToken(KEY, { tenantId: 'default', runId }, 600));
  expect(running.status).toBe(200);
  expect((await running.json()).result.tools.map((t: { name: string }) => t.name)).toEqual(['lookup']);
  await expiredBy(h.svc, await mintRunToken(KEY, { tenantId: 'default', runId: 'clock' }, TTL_S + DEADLINE_MS / 1000));
  h.fake.release(hold);

  const seen = await stream.until((e: any) => (e.type === 'agent.session.turn.item.added' && e.item.type === 'function_call') || isTurnEnd(e));
  const call = seen.at(-1) as any;
  expect(call.item?.name, JSON.stringify(seen)).toBe('lookup');
  await h.client.beta.agents.sessions.events.create(session.id, { events: [{ type: 'agent.session.input.tool_result', turn_id: call.turn_id, call_id: call.item.call_id, success: true, output: `found ${hold}` }] });
  const rest = await stream.until(isTurnEnd);
  await stream.close();
  expect(rest.at(-1)!.type, JSON.stringify(rest)).toBe('agent.session.turn.completed');
  expect(textOf(rest as never)).toContain(`TOOL-RESULT-SEEN: found ${hold}`);
  expect(JSON.stringify(rest)).not.toContain('run token');

  // the run ended: a token of it is refused, though it would live ten minutes more
  const ended = await callEndpoint(h.svc, session.id, await mintRunToken(KEY, { tenantId: 'default', runId }, 600));
  expect(ended.status).toBe(409);
  expect(await ended.json()).toEqual({ error: `run ${runId} is ok, not running: its function tools are not served` });
  const expired = await callEndpoint(h.svc, session.id, await mintRunToken(KEY, { tenantId: 'default', runId }, -60));
  expect(expired.status).toBe(401);
}

describe('a /v1 function tool called after the run outlived its first token (all-in-one server)', () => {
  let h: AgentsHarness;
  beforeAll(async () => {
    h = await startAgentsHarness(ENV);
    harnesses.push(h);
  });

  it('reaches the client, and the turn completes with its answer; an ended run’s token is refused', async () => {
    await callsPastItsFirstToken(h, 'allinone');
  });

  it('is not held for approval by an always_ask default: function tools are the client’s, no policy names them', async () => {
    const toolset = { default_config: { permission_policy: { type: 'always_ask' } }, configs: [] };
    const agent = await (h.client.beta.agents as any).create({ model: FAKE_MODEL, agent_toolset: toolset, tools: [{ type: 'function', name: 'lookup', description: 'Look something up', parameters: { type: 'object', properties: {} } }] });
    const session = await h.client.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'none' } });
    const stream = reader(await h.client.beta.agents.sessions.events.stream(session.id));
    await h.client.beta.agents.sessions.events.create(session.id, { events: [{ type: 'agent.session.input.message', input: [{ role: 'user', content: [{ type: 'input_text', text: 'CALL_TOOL lookup {}' }] }] }] });
    const seen = await stream.until((e: any) => (e.type === 'agent.session.turn.item.added' && e.item.type === 'function_call') || isTurnEnd(e) || JSON.stringify(e).includes('tool_approval'));
    const call = seen.at(-1) as any;
    expect(call.item?.name, JSON.stringify(seen)).toBe('lookup');
    await h.client.beta.agents.sessions.events.create(session.id, { events: [{ type: 'agent.session.input.tool_result', turn_id: call.turn_id, call_id: call.item.call_id, success: true, output: 'found it' }] });
    const rest = await stream.until(isTurnEnd);
    await stream.close();
    expect(rest.at(-1)!.type).toBe('agent.session.turn.completed');
    expect(textOf(rest as never)).toContain('TOOL-RESULT-SEEN: found it');
  });
});

describe('a /v1 function tool called after the run outlived its first token (conductor and runner apart)', () => {
  let h: AgentsHarness;
  beforeAll(async () => {
    const db = await createTestDatabase();
    dbs.push(db);
    const port = await freePort();
    const runner = await startTestSvc({ ...ENV, SVC_INTERNAL_TOKEN: INTERNAL_TOKEN, SVC_CONDUCTOR_URL: `http://127.0.0.1:${port}` }, 'runner,worker');
    stops.push(() => runner.stop());
    h = await startAgentsHarness({ ...ENV, SVC_INTERNAL_TOKEN: INTERNAL_TOKEN, SVC_RUNNERS: runner.url }, { databaseUrl: db.url, port, role: 'conductor' });
    harnesses.push(h);
  });

  it('reaches the client, and the turn completes with its answer; an ended run’s token is refused', async () => {
    await callsPastItsFirstToken(h, 'split');
  });
});
