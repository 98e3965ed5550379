import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { FAKE_MODEL, isTurnEnd, reader, textOf } from '../support/agents.ts';
import { modelRequests, startFakeProvider, type FakeProvider } from '../support/fake-provider.ts';
import { createTestDatabase } from '../support/pg.ts';
import { startSvcProcess, type SvcProcess } from '../support/process.ts';

/**
 * Two `svc serve` processes on one PostgreSQL database, driven by the `openai` 7.15.0 SDK: input posted to the
 * process that does not drive the session's turn (a message, a tool result) is handed to the one that does through
 * PostgreSQL and joins its running turn; no 409. A's workers reach the function-tool endpoint through B (its
 * SVC_CONDUCTOR_URL names B, as a Service in front of the replicas may route them), so a function call of A's turn
 * is handed from B to A the same way.
 */
const KEY = 'ao_test_replicasreplicasreplica01';
const userText = (text: string) => ({ type: 'agent.session.input.message' as const, input: [{ role: 'user' as const, content: [{ type: 'input_text' as const, text }] }] });

describe('agent session input through either of two conductor processes', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let fake: FakeProvider;
  let procs: SvcProcess[] = [];
  let a: OpenAI;
  let b: OpenAI;
  const dirs: string[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    fake = await startFakeProvider();
    const env = (name: string, extra: Record<string, string> = {}) => {
      const dir = mkdtempSync(join(tmpdir(), `svc-agents-replica-${name}-`));
      dirs.push(dir);
      return {
        DATABASE_URL: db.url,
        SVC_DATA_DIR: dir,
        SVC_INSTANCE_ID: name,
        SVC_BOOTSTRAP_TOKEN: KEY,
        AGENT_API_KEY_PEPPER: 'replicas-pepper-0123456789abcdef',
        AGENT_ORC_ADMIN_TENANT: 'default',
        SVC_SECRETS_KEY: 'replica-secrets-key-0123456789abcdef',
        SVC_RUN_TOKEN_SECRET: 'replica-run-token-0123456789abcdef',
        SVC_INTERNAL_TOKEN: 'replica-internal-token',
        SVC_AGGREGATOR_FAKE_URL: fake.url,
        SVC_AGGREGATOR_FAKE_KEY: 'fake-aggregator-key',
        ...extra,
      };
    };
    const second = await startSvcProcess([], env('b'));
    procs = [await startSvcProcess([], env('a', { SVC_CONDUCTOR_URL: second.url })), second];
    [a, b] = procs.map((p) => new OpenAI({ baseURL: `${p.url}/v1`, apiKey: KEY, maxRetries: 0 }));
  }, 60_000);
  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop('SIGKILL')));
    await fake?.close();
    await db?.drop().catch(() => {});
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  const dumpLogsOnFailure = () => onTestFailed(() => console.error(procs.map((p) => p.output()).join('\n----\n')));

  it('joins a message posted to process B to the turn process A drives', async () => {
    dumpLogsOnFailure();
    const agent = await a.beta.agents.create({ model: FAKE_MODEL });
    const session = await a.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'none' } });
    const stream = reader(await a.beta.agents.sessions.events.stream(session.id));
    const before = modelRequests(fake).length;
    // A's run waits at the model until released: the turn is A's and running while B gets the next message
    await a.beta.agents.sessions.events.create(session.id, { events: [userText('first HOLD replicas')] });
    await fake.when(() => modelRequests(fake).length > before);
    await b.beta.agents.sessions.events.create(session.id, { events: [userText('second, through B')] });
    fake.release('replicas');

    const events = (await stream.until(isTurnEnd)) as any[];
    await stream.close();
    expect(events.at(-1).type).toBe('agent.session.turn.completed');
    expect(new Set(events.filter((e) => e.turn_id).map((e) => e.turn_id)).size).toBe(1);
    const users = events.filter((e) => e.type === 'agent.session.turn.item.added' && e.item.type === 'message' && e.item.role === 'user').map((e) => e.item.content[0].text);
    expect(users).toEqual(['first HOLD replicas', 'second, through B']);
    expect(textOf(events)).toContain('FAKE-REPLY: second, through B');
    expect((await a.beta.agents.sessions.turns.list(session.id)).data.map((t) => t.status)).toEqual(['completed']);
  });

  it('completes the turn process A drives with a tool result posted to process B (its function call came through B too)', async () => {
    dumpLogsOnFailure();
    const agent = await a.beta.agents.create({
      model: FAKE_MODEL,
      tools: [{ type: 'function', name: 'get_weather', description: 'The weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }],
    });
    const session = await a.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'none' } });
    const stream = reader(await a.beta.agents.sessions.events.stream(session.id));
    await a.beta.agents.sessions.events.create(session.id, { events: [userText('CALL_TOOL get_weather {"city":"Oslo"}')] });
    const call = (await stream.until((e: any) => e.type === 'agent.session.turn.item.added' && e.item.type === 'function_call')).at(-1) as any;
    await b.beta.agents.sessions.events.create(session.id, {
      events: [{ type: 'agent.session.input.tool_result', turn_id: call.turn_id, call_id: call.item.call_id, success: true, output: 'sunny' }],
    });
    const rest = await stream.until(isTurnEnd);
    await stream.close();
    expect(rest.at(-1)!.type).toBe('agent.session.turn.completed');
    expect(textOf(rest as never)).toContain('TOOL-RESULT-SEEN: sunny');
  });
});
