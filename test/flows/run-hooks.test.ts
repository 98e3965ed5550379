import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RunFinished } from '../../src/modules/conductor/index.ts';
import { AppError } from '../../src/shared/errors.ts';
import { collect, FAKE_MODEL, startAgentsHarness } from '../support/agents.ts';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.ts';
import { freePort } from '../support/listen.ts';
import { createTestDatabase } from '../support/pg.ts';
import { startTestSvc, type TestSvc } from '../support/svc.ts';
import { readSse } from '../support/sse.ts';

/**
 * Run hooks on the all-in-one build: every run that ends is announced once to each runFinished subscriber (a run
 * that finishes, a delegated sub-run with its parent, a cancelled run), with its usage and cost inputs; a subscriber
 * that fails gets the announcement again, and not again once it succeeded, without calling the others twice; a gate
 * that refuses a run answers 402 and creates nothing.
 */
const KEY = 'ao_test_runhooksrunhooksrunhooks01';
const WAIT = { timeout: 20_000, interval: 50 };

let svc: TestSvc;
let fake: FakeProvider;
let dropDatabase: () => Promise<void>;
const got = { steady: [] as RunFinished[], flaky: [] as RunFinished[] };

const api: TestSvc['api'] = (path, init) => svc.api(path, init);

beforeAll(async () => {
  fake = await startFakeProvider();
  const db = await createTestDatabase();
  dropDatabase = db.drop;
  const port = await freePort();
  svc = await startTestSvc({ DATABASE_URL: db.url, SVC_BOOTSTRAP_TOKEN: KEY, SVC_CONDUCTOR_URL: `http://127.0.0.1:${port}`, OPENAI_COMPATIBLE_BASE_URL: fake.url, OPENAI_COMPATIBLE_API_KEY: 'x' }, 'all', { port });
  const hooks = svc.server.built.runHooks!;
  await hooks.onRunFinished('steady', (e) => void got.steady.push(e));
  const failedOnce = new Set<string>();
  await hooks.onRunFinished('flaky', (e) => {
    got.flaky.push(e);
    if (!failedOnce.has(e.runId)) {
      failedOnce.add(e.runId);
      throw new Error('the ledger is down for a moment');
    }
  });
  hooks.gate((ctx) => {
    if (ctx.profile === 'broke') throw new AppError(402, 'out of credit: top up to run this profile');
  });
  const model = 'openai-compatible:fake-model';
  for (const profile of [
    { name: 'lead', runtime: 'general', model, tools: ['@default', '@delegate'] },
    { name: 'scout', runtime: 'general', model },
    { name: 'broke', runtime: 'general', model },
  ]) {
    expect((await api('/api/profiles', { method: 'POST', json: profile })).status).toBe(201);
  }
  expect((await api('/api/pools', { method: 'POST', json: { name: 'team', members: [{ profile: 'lead', role: 'lead' }, { profile: 'scout' }] } })).status).toBe(201);
}, 60_000);
afterAll(async () => {
  await svc?.stop();
  await fake?.close();
  await dropDatabase?.();
});

async function runToEnd(body: Record<string, unknown>): Promise<string> {
  const res = await api('/api/runs', { method: 'POST', json: body });
  expect(res.status).toBe(202);
  const { runId } = (await res.json()) as { runId: string };
  await readSse(await api(`/api/runs/${runId}/stream`));
  return runId;
}
const runsOf = async () => (await (await api('/api/runs')).json()) as Array<{ id: string; status: string; subTask: { profile: string; parentId?: string } }>;
/** States of the subscriber's jobs for a run (one job per run and subscriber). */
const jobsOf = async (subscriber: string, runId: string) =>
  (
    await sql<{ state: string; retry_count: number }>`
      select state::text as state, retry_count from pgboss.job where name = ${`hooks.run-finished.${subscriber}`} and data->>'runId' = ${runId}`.execute(svc.server.built.database!.db)
  ).rows;
const delivered = (list: RunFinished[], runId: string) => list.filter((e) => e.runId === runId);
/** Waits until both subscribers' jobs for the run completed, so a second delivery would have happened by now. */
const settled = (runId: string) =>
  vi.waitFor(async () => {
    expect(await jobsOf('steady', runId)).toEqual([expect.objectContaining({ state: 'completed' })]);
    expect(await jobsOf('flaky', runId)).toEqual([expect.objectContaining({ state: 'completed' })]);
  }, WAIT);

describe('run hooks', () => {
  it('announces a finished run once, with usage, cost inputs and the parent of a delegated sub-run', async () => {
    const runId = await runToEnd({ profile: 'lead', prompt: 'CALL_TOOL delegate {"profile":"scout","prompt":"say hi"}' });
    const child = (await runsOf()).find((r) => r.subTask.parentId === runId)!;
    expect(child).toMatchObject({ status: 'ok' });
    await settled(runId);
    await settled(child.id);

    const run = (await (await api(`/api/runs/${runId}`)).json()) as { status: string; startedAt: string; finishedAt: string; subTask: { sessionId: string }; events: Array<{ type: string; usage?: { inputTokens: number; outputTokens: number; cacheReadTokens?: number; cacheCreateTokens?: number } }> };
    const usage = run.events.filter((e) => e.type === 'usage').map((e) => e.usage!);
    expect(usage.length).toBeGreaterThan(0);
    expect(delivered(got.steady, runId)).toEqual([
      {
        runId,
        tenantId: 'default',
        profile: 'lead',
        sessionId: run.subTask.sessionId,
        parentId: null,
        status: 'ok',
        startedAt: run.startedAt,
        finishedAt: run.finishedAt,
        usage: {
          input: usage.reduce((n, u) => n + u.inputTokens, 0),
          output: usage.reduce((n, u) => n + u.outputTokens, 0),
          cacheRead: usage.reduce((n, u) => n + (u.cacheReadTokens ?? 0), 0),
          cacheWrite: usage.reduce((n, u) => n + (u.cacheCreateTokens ?? 0), 0),
        },
        cost: { model: 'openai-compatible:fake-model', runtime: 'general', keySource: 'platform' },
        origin: null,
      },
    ]);
    // a run no automation or workflow started queues no job for those subscribers, which take their own runs only
    expect(await jobsOf('automations', runId)).toEqual([]);
    expect(await jobsOf('workflows', runId)).toEqual([]);
    expect(got.steady.filter((e) => e.runId === runId)[0].usage.input).toBeGreaterThan(0);
    expect(delivered(got.steady, child.id)).toEqual([expect.objectContaining({ runId: child.id, profile: 'scout', parentId: runId, status: 'ok' })]);
  });

  it('gives a failing subscriber the announcement again, and neither subscriber a second one once it succeeded', async () => {
    const runId = await runToEnd({ profile: 'scout', prompt: 'hello hooks' });
    await settled(runId);
    expect(delivered(got.flaky, runId).map((e) => e.status)).toEqual(['ok', 'ok']);
    expect(await jobsOf('flaky', runId)).toEqual([{ state: 'completed', retry_count: 1 }]);
    expect(delivered(got.steady, runId)).toHaveLength(1);
  });

  it('announces a cancelled run once, as cancelled', async () => {
    const res = await api('/api/runs', { method: 'POST', json: { profile: 'scout', prompt: 'SLOW_DELTAS 200 50' } });
    const { runId } = (await res.json()) as { runId: string };
    const stream = readSse(await api(`/api/runs/${runId}/stream`));
    expect((await api(`/api/runs/${runId}`, { method: 'DELETE' })).status).toBe(204);
    await stream;
    await settled(runId);
    expect(delivered(got.steady, runId)).toEqual([expect.objectContaining({ runId, status: 'cancelled' })]);
  });

  it('announces a force-terminated run once, as cancelled', async () => {
    const res = await api('/api/runs', { method: 'POST', json: { profile: 'scout', prompt: 'SLOW_DELTAS 200 50' } });
    const { runId } = (await res.json()) as { runId: string };
    const stream = readSse(await api(`/api/runs/${runId}/stream`));
    const terminated = await api(`/api/runs/${runId}/terminate`, { method: 'POST' });
    expect(await terminated.json()).toMatchObject({ cancelled: true, statusWritten: true });
    await stream;
    await settled(runId);
    expect(delivered(got.steady, runId)).toEqual([expect.objectContaining({ runId, status: 'cancelled' })]);
  });

  it('refuses a run a gate refuses with 402, and creates no run and no session', async () => {
    const sessionsBefore = (await (await api('/api/sessions')).json()) as unknown[];
    const runsBefore = await runsOf();
    const res = await api('/api/runs', { method: 'POST', json: { profile: 'broke', prompt: 'hi' } });
    expect(res.status).toBe(402);
    expect(await res.json()).toEqual({ error: 'out of credit: top up to run this profile' });
    expect(await runsOf()).toEqual(runsBefore);
    expect(((await (await api('/api/sessions')).json()) as unknown[]).length).toBe(sessionsBefore.length);
  });
});

describe('run hooks under the /v1 agents API', () => {
  it("say whose provider key paid for a turn's run: the platform's aggregator or the organisation's own key", async () => {
    const h = await startAgentsHarness();
    try {
      const seen: RunFinished[] = [];
      await h.svc.server.built.runHooks!.onRunFinished('cost', (e) => void seen.push(e));
      const turn = async (model: string) => {
        const agent = await h.client.beta.agents.create({ model });
        const session = await h.client.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'none' } });
        await collect(h.client.beta.agents.sessions.stream(session.id, { input: 'what does this cost' }));
      };
      await turn(FAKE_MODEL);
      await vi.waitFor(() => expect(seen).toHaveLength(1), WAIT);
      expect((await h.svc.api('/api/providers/openai-compatible/key', { method: 'PUT', json: { key: 'the-organisations-own-key' } })).status).toBe(200);
      await turn('openai-compatible/fake-model');
      await vi.waitFor(() => expect(seen).toHaveLength(2), WAIT);
      expect(seen.map((e) => [e.status, e.cost])).toEqual([
        ['ok', { model: 'openai-compatible:fake-model', runtime: 'general', keySource: 'platform' }],
        ['ok', { model: 'openai-compatible:fake-model', runtime: 'general', keySource: 'tenant' }],
      ]);
    } finally {
      await h.stop();
    }
  }, 60_000);
});
