import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { withTenant } from '../../src/db/index.ts';
import { startAgentsHarness, type AgentsHarness } from '../support/agents.ts';
import { cli, tempDir } from '../support/cli.ts';
import { freePort } from '../support/listen.ts';
import { readSse } from '../support/sse.ts';

/**
 * Billing in `ledger` mode on the all-in-one build, over real HTTP: the credit gate answers the seed's 402 on
 * POST /api/runs and on /v1 (its error object), a run's usage from the fake provider is charged exactly once at the
 * model's list price (also when its end is announced again), the spend cap refuses new runs, and concurrent runs
 * overshoot a small balance by no more than the runs in flight when it ran out.
 *
 * Prices: the fake provider answers as `gpt-4o` (OpenAI list price $2.50 / M input, $1.25 / M cached input, $10 / M
 * output; cache writes at the input price), served through the operator's OpenAI-compatible key, so the runs draw
 * platform credit.
 */
const WAIT = { timeout: 30_000, interval: 50 };
const PRICED = 'openai-compatible:gpt-4o';

let h: AgentsHarness;
const db = () => h.svc.server.built.database!.db;
const keys: Record<string, string> = {};
const as = (tenant: string) => (path: string, init: RequestInit & { json?: unknown } = {}) => h.svc.api(path, { ...init, key: keys[tenant] });

async function tenant(id: string, profiles: Array<{ name: string; model: string; tools?: string[] }> = [{ name: 'priced', model: PRICED }]): Promise<void> {
  keys[id] = await h.otherOrg(id);
  for (const p of profiles) expect((await as(id)('/api/profiles', { method: 'POST', json: { ...p, runtime: 'general' } })).status).toBe(201);
}
const grant = async (tenantId: string, amountMicroUSD: number) =>
  expect((await h.svc.api('/api/billing/grants', { method: 'POST', json: { tenantId, amountMicroUSD } })).status).toBe(201);
const balance = async (t: string) => ((await (await as(t)('/api/billing/wallet')).json()) as { balanceMicroUSD: number }).balanceMicroUSD;
const charges = (t: string) =>
  withTenant(db(), t, async (tx) => (await sql<{ run_id: string; amount: string }>`select run_id, (-amount_micro_usd)::text as amount from credit_ledger where kind = 'charge'`.execute(tx)).rows);
/** The billing subscriber's jobs for a run, by state. */
const billingJobs = async (runId: string) =>
  (await sql<{ state: string }>`select state::text as state from pgboss.job where name = 'hooks.run-finished.billing' and data->>'runId' = ${runId}`.execute(db())).rows.map((r) => r.state);

async function runToEnd(t: string, prompt = 'hello there'): Promise<string> {
  const res = await as(t)('/api/runs', { method: 'POST', json: { profile: 'priced', prompt } });
  expect(res.status).toBe(202);
  const { runId } = (await res.json()) as { runId: string };
  await readSse(await as(t)(`/api/runs/${runId}/stream`));
  return runId;
}

/** The gpt-4o price of a run's logged usage, in micro-USD. */
async function listPrice(t: string, runId: string): Promise<number> {
  const run = (await (await as(t)(`/api/runs/${runId}`)).json()) as { events: Array<{ type: string; usage?: { inputTokens: number; outputTokens: number; cacheReadTokens?: number; cacheCreateTokens?: number } }> };
  const u = run.events.filter((e) => e.type === 'usage').map((e) => e.usage!);
  const sum = (f: (x: (typeof u)[number]) => number) => u.reduce((n, x) => n + f(x), 0);
  const input = sum((x) => x.inputTokens);
  const read = sum((x) => x.cacheReadTokens ?? 0);
  const write = sum((x) => x.cacheCreateTokens ?? 0);
  const output = sum((x) => x.outputTokens);
  expect(input + output).toBeGreaterThan(0);
  return Math.round((input - read - write) * 2.5 + read * 1.25 + write * 2.5 + output * 10);
}

beforeAll(async () => {
  // delegated sub-runs are started by the runner's delegate tool through the conductor's URL
  const port = await freePort();
  h = await startAgentsHarness({ SVC_BILLING: 'ledger', SVC_CONDUCTOR_URL: `http://127.0.0.1:${port}` }, { port });
}, 60_000);
afterAll(async () => {
  await h?.stop();
});

describe('the credit gate', () => {
  it('refuses a run on POST /api/runs with the exact 402 body while the tenant has no credit, and creates nothing', async () => {
    await tenant('broke');
    const res = await as('broke')('/api/runs', { method: 'POST', json: { profile: 'priced', prompt: 'hi' } });
    expect(res.status).toBe(402);
    expect(await res.json()).toEqual({ error: 'credits_exhausted', scope: 'tenant', balance_micro_usd: 0, message: expect.stringMatching(/credits exhausted/i) });
    expect(await (await as('broke')('/api/runs')).json()).toEqual([]);
    expect(h.fake.requests.filter((r) => r.wire === 'chat' && JSON.stringify(r.body).includes('"hi"'))).toEqual([]);
  });

  it('answers /v1 session creation with input, and an input message, with 402 in the OpenAI error shape', async () => {
    const key = keys.broke;
    const v1 = (path: string, json: unknown) =>
      fetch(`${h.svc.url}/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'openai-beta': 'agents=v1' }, body: JSON.stringify(json) });
    const agent = (await (await v1('/agents', { model: 'svc/fake/gpt-4o' })).json()) as { id: string };
    const created = await v1('/agents/sessions', { agent_id: agent.id, environment: { type: 'none' }, input: 'hello' });
    expect(created.status).toBe(402);
    expect(await created.json()).toEqual({ error: { message: expect.stringMatching(/credits exhausted/i), type: 'insufficient_quota', param: null, code: 'credits_exhausted' } });

    // without input the session is created (no model work); its first message is refused
    const client = h.clientFor(key);
    const session = await client.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'none' } });
    const sent = await v1(`/agents/sessions/${session.id}/events`, { events: [{ type: 'agent.session.input.message', input: [{ role: 'user', content: [{ type: 'input_text', text: 'hello' }] }] }] });
    expect(sent.status).toBe(402);
    expect(((await sent.json()) as { error: { code: string } }).error.code).toBe('credits_exhausted');
    expect((await client.beta.agents.sessions.retrieve(session.id)).status).toBe('idle');
    // the official SDK surfaces it as an API error with status 402
    await expect(client.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'none' }, input: 'hello' })).rejects.toMatchObject({ status: 402, code: 'credits_exhausted' });
  });

  it('has no billing client to check out with in ledger mode (503), while the wallet answers from the ledger with nothing on sale', async () => {
    const res = await as('broke')('/api/billing/checkout', { method: 'POST', json: { cents: 1000 } });
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ error: 'no billing client: checkout needs SVC_BILLING=stripe (this server bills from a ledger the operator grants credit to)' });
    expect((await as('broke')('/api/billing/portal', { method: 'POST' })).status).toBe(503);
    expect((await fetch(`${h.svc.url}/api/stripe/webhook`, { method: 'POST', body: '{}' })).status).toBe(503);
    const wallet = await as('broke')('/api/billing/wallet');
    expect(wallet.status).toBe(200);
    expect(await wallet.json()).toMatchObject({ configured: false, balanceMicroUSD: 0, plan: null, machineTime: { usedSeconds: 0, includedSeconds: null }, packs: [] });
  });

  it('refuses a delegated sub-run once the balance ran out while its parent ran, and the parent finishes', async () => {
    await tenant('team', [
      { name: 'lead', model: PRICED, tools: ['@default', '@delegate'] },
      { name: 'scout', model: PRICED },
    ]);
    expect((await as('team')('/api/pools', { method: 'POST', json: { name: 'crew', members: [{ profile: 'lead', role: 'lead' }, { profile: 'scout' }] } })).status).toBe(201);
    await grant('team', 1_000_000);
    const res = await as('team')('/api/runs', { method: 'POST', json: { profile: 'lead', prompt: 'HOLD team\nCALL_TOOL delegate {"profile":"scout","prompt":"say hi"}' } });
    expect(res.status).toBe(202);
    const { runId } = (await res.json()) as { runId: string };
    // the lead's model call is in flight: the balance runs out now (another run's charge), then the model answers
    await h.fake.when(() => h.fake.requests.some((r) => JSON.stringify(r.body ?? '').includes('HOLD team')));
    await withTenant(db(), 'team', (tx) => sql`insert into credit_ledger (id, tenant_id, kind, amount_micro_usd, description) values ('cred_team_spent', 'team', 'charge', -1000000, 'test: spent elsewhere')`.execute(tx));
    h.fake.release('team');
    const frames = await readSse<{ type: string; message?: string; result?: unknown; isError?: boolean }>(await as('team')(`/api/runs/${runId}/stream`));
    const toolResult = frames.map((f) => f.event).find((e) => e.type === 'tool_result');
    expect(JSON.stringify(toolResult)).toMatch(/credits_exhausted|credits exhausted/i);
    expect(frames.at(-1)!.event.type).toBe('result');
    const runs = (await (await as('team')('/api/runs')).json()) as Array<{ id: string; subTask: { parentId?: string } }>;
    expect(runs.map((r) => r.id)).toEqual([runId]);
  });

  it('lets the free demo model run without credit', async () => {
    const client = h.clientFor(keys.broke);
    const agent = await client.beta.agents.create({ model: 'svc/demo/echo' });
    const session = await client.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'none' }, input: 'hello' });
    expect(session.id).toBeTruthy();
  });
});

describe('charging', () => {
  it('debits exactly the list price of the run once, even when the run end is announced again', async () => {
    await tenant('acme');
    await grant('acme', 1_000_000);
    const runId = await runToEnd('acme');
    const price = await listPrice('acme', runId);
    await vi.waitFor(async () => expect(await billingJobs(runId)).toEqual(['completed']), WAIT);
    expect(await charges('acme')).toEqual([{ run_id: runId, amount: String(price) }]);
    expect(await balance('acme')).toBe(1_000_000 - price);
    // the wallet's machine time is the wall time of this month's runs: this one's
    const run = (await (await as('acme')(`/api/runs/${runId}`)).json()) as { startedAt: string; finishedAt: string };
    const { machineTime } = (await (await as('acme')('/api/billing/wallet')).json()) as { machineTime: { usedSeconds: number; includedSeconds: null } };
    expect(machineTime.usedSeconds).toBeCloseTo((Date.parse(run.finishedAt) - Date.parse(run.startedAt)) / 1000, 2);
    expect(machineTime.includedSeconds).toBeNull(); // no provider, no plan

    // the end announced a second time (a retried delivery): a second job runs, the ledger is unchanged
    await withTenant(db(), 'acme', (tx) => h.svc.server.built.runHooks!.runFinished(tx, 'acme', runId));
    await vi.waitFor(async () => expect(await billingJobs(runId)).toEqual(['completed', 'completed']), WAIT);
    expect(await charges('acme')).toEqual([{ run_id: runId, amount: String(price) }]);
    expect(await balance('acme')).toBe(1_000_000 - price);

    // /api/usage prices the same tokens from the same catalog, and the cost counter saw the charge
    const usage = (await (await as('acme')('/api/usage')).json()) as { costMicroUsd: number; byModel: Array<{ model: string; priced: boolean }> };
    expect(usage.costMicroUsd).toBe(price);
    expect(usage.byModel).toEqual([expect.objectContaining({ model: PRICED, priced: true })]);
    const metrics = await (await fetch(`${h.svc.url}/metrics`)).text();
    expect(metrics).toMatch(/^svc_run_cost_usd_total [0-9.e-]+$/m);
    expect(Number(/^svc_run_cost_usd_total ([0-9.e-]+)$/m.exec(metrics)![1])).toBeGreaterThanOrEqual(price / 1e6 - 1e-12);
  });

  it("meters a run on the tenant's own provider key without credit and without charging it", async () => {
    await tenant('own', []);
    expect((await as('own')('/api/providers/openai-compatible/key', { method: 'PUT', json: { key: 'tenant-own-key-1234' } })).status).toBeLessThan(300);
    const client = h.clientFor(keys.own);
    const agent = await client.beta.agents.create({ model: 'openai-compatible/gpt-4o' });
    await client.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'none' }, input: 'on my own dime' });
    const runId = await vi.waitFor(async () => {
      const runs = (await (await as('own')('/api/runs')).json()) as Array<{ id: string; status: string }>;
      expect(runs).toEqual([expect.objectContaining({ status: 'ok' })]);
      return runs[0].id;
    }, WAIT);
    await vi.waitFor(async () => expect(await billingJobs(runId)).toEqual(['completed']), WAIT);
    expect(h.fake.requests.some((r) => r.headers.authorization === 'Bearer tenant-own-key-1234')).toBe(true);
    expect(await charges('own')).toEqual([]);
    expect(await balance('own')).toBe(0);
    const usage = (await (await as('own')('/api/usage')).json()) as { costMicroUsd: number; byModel: Array<{ model: string; priced: boolean }> };
    expect(usage.costMicroUsd).toBeGreaterThan(0);
    expect(usage.byModel).toEqual([expect.objectContaining({ model: 'openai-compatible:gpt-4o', priced: true })]);
  });

  it('reports a model without a known price as unpriced and charges nothing', async () => {
    await tenant('odd', [{ name: 'priced', model: 'openai-compatible:model-nobody-prices' }]);
    await grant('odd', 1_000_000);
    const runId = await runToEnd('odd');
    await vi.waitFor(async () => expect(await billingJobs(runId)).toEqual(['completed']), WAIT);
    expect(await charges('odd')).toEqual([]);
    expect(await balance('odd')).toBe(1_000_000);
    const metrics = await (await fetch(`${h.svc.url}/metrics`)).text();
    expect(metrics).toMatch(/^svc_usage_unpriced_total\{model="openai-compatible:model-nobody-prices"\} 1$/m);
    const usage = (await (await as('odd')('/api/usage')).json()) as { byModel: Array<{ priced: boolean }> };
    expect(usage.byModel).toEqual([expect.objectContaining({ priced: false })]);
  });
});

describe('spend caps', () => {
  it('refuses new runs with spend_cap_reached once the monthly cap is spent', async () => {
    await tenant('capped');
    await grant('capped', 1_000_000);
    const runId = await runToEnd('capped');
    await vi.waitFor(async () => expect(await billingJobs(runId)).toEqual(['completed']), WAIT);
    // any charge is at least one cent of the window (spend rounds up to the cent): a one-cent cap is spent
    expect((await as('capped')('/api/spend-cap', { method: 'PUT', json: { limit_usd_cents: 1 } })).status).toBe(200);
    // a webhook endpoint for billing events (nothing listens there: its log is what this test reads)
    const hook = (await (await as('capped')('/api/webhooks', { method: 'POST', json: { url: 'http://127.0.0.1:9/cap', events: ['billing.*'] } })).json()) as { id: string };
    const res = await as('capped')('/api/runs', { method: 'POST', json: { profile: 'priced', prompt: 'more' } });
    expect(res.status).toBe(402);
    // the spent window is reported once, however many runs it refuses
    expect((await as('capped')('/api/runs', { method: 'POST', json: { profile: 'priced', prompt: 'again' } })).status).toBe(402);
    const logged = (await (await as('capped')(`/api/webhooks/${hook.id}/deliveries`)).json()) as Array<{ event: string }>;
    expect(logged.map((d) => d.event)).toEqual(['billing.spend_cap_reached']);
    const now = new Date();
    const nextMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
    expect(await res.json()).toEqual({
      error: 'spend_cap_reached',
      scope: 'tenant',
      window: 'month',
      limit_usd_cents: 1,
      spent_usd_cents: 1,
      resets_at: nextMonth,
      balance_micro_usd: await balance('capped'),
      message: expect.stringMatching(/monthly spend cap/),
    });
  });

  it('overshoots a balance that covers 5 runs, with 20 started at once, by no more than the runs in flight when it ran out', async () => {
    // one run's price first (every run here has the same prompt, so the same usage)
    await tenant('crowd');
    await grant('crowd', 1_000_000);
    const probe = await runToEnd('crowd', 'same words');
    const price = await listPrice('crowd', probe);
    await vi.waitFor(async () => expect(await billingJobs(probe)).toEqual(['completed']), WAIT);
    const start = await balance('crowd');
    // leave exactly five runs' worth
    await withTenant(db(), 'crowd', (tx) => sql`insert into credit_ledger (id, tenant_id, kind, amount_micro_usd, description) values ('cred_trim', 'crowd', 'charge', ${-(start - 5 * price)}, 'test: trim to five runs')`.execute(tx));
    expect(await balance('crowd')).toBe(5 * price);

    const answers = await Promise.all(Array.from({ length: 20 }, () => as('crowd')('/api/runs', { method: 'POST', json: { profile: 'priced', prompt: 'same words' } })));
    const admitted = (await Promise.all(answers.filter((r) => r.status === 202).map((r) => r.json()))) as Array<{ runId: string }>;
    for (const r of answers.filter((r) => r.status !== 202)) expect(r.status).toBe(402);
    expect(admitted.length).toBeGreaterThanOrEqual(5);
    for (const { runId } of admitted) await readSse(await as('crowd')(`/api/runs/${runId}/stream`));
    // the billing subscriber's queue takes one job per poll (2 s): twenty ends take a while to be charged
    for (const { runId } of admitted) await vi.waitFor(async () => expect(await billingJobs(runId)).toEqual(['completed']), { ...WAIT, timeout: 120_000 });
    // every admitted run is charged in full, once, on the first attempt (the ledger's insert is planned the same after
    // many executions: a generic plan once failed the partial unique index's inference)
    const retried = await sql<{ n: number }>`select count(*)::int as n from pgboss.job where name = 'hooks.run-finished.billing' and retry_count > 0`.execute(db());
    expect(retried.rows[0].n).toBe(0);
    expect((await charges('crowd')).filter((c) => c.run_id !== probe && c.run_id !== null)).toHaveLength(admitted.length);
    const end = await balance('crowd');
    expect(end).toBe(5 * price - admitted.length * price);
    // the bound: no run was admitted after the balance ran out, so the overshoot is at most the runs in flight then
    const runs = (await (await as('crowd')('/api/runs')).json()) as Array<{ id: string; startedAt: string }>;
    const exhaustedAt = await withTenant(db(), 'crowd', async (tx) =>
      (await sql<{ at: Date }>`select min(created_at) as at from (select created_at, sum(amount_micro_usd) over (order by created_at, id) as running from credit_ledger) l where running <= 0`.execute(tx)).rows[0].at,
    );
    const inFlightAtExhaustion = runs.filter((r) => admitted.some((a) => a.runId === r.id) && new Date(r.startedAt) <= new Date(exhaustedAt));
    expect(inFlightAtExhaustion).toHaveLength(admitted.length);
    expect(-end).toBeLessThanOrEqual(inFlightAtExhaustion.length * price - 5 * price);
    // README "Overshoot bound": twenty started against five runs' worth end at worst fifteen runs' cost below zero
    expect(admitted.length).toBeLessThanOrEqual(20);
    expect(-end).toBeLessThanOrEqual(15 * price);
    // and once it ran out, nothing more starts
    const after = await as('crowd')('/api/runs', { method: 'POST', json: { profile: 'priced', prompt: 'same words' } });
    expect(after.status).toBe(402);
    expect(((await after.json()) as { error: string }).error).toBe('credits_exhausted');
  }, 240_000);
});

describe('the CLI', () => {
  it('`svc billing wallet` shows the balance moving after a run, and `svc usage` this month by model', async () => {
    await tenant('cli');
    await grant('cli', 2_000_000);
    const env = { SVC_CONFIG_DIR: tempDir(), SVC_API_URL: h.svc.url, SVC_API_KEY: keys.cli };
    const before = await cli(['billing', 'wallet', '--json'], env);
    expect(before.code, before.stderr).toBe(0);
    expect(before.json()).toMatchObject({ configured: true, balanceMicroUSD: 2_000_000 });

    const runId = await runToEnd('cli', 'a question worth paying for');
    const price = await listPrice('cli', runId);
    await vi.waitFor(async () => expect(await billingJobs(runId)).toEqual(['completed']), WAIT);
    const after = await cli(['billing', 'wallet', '--json'], env);
    expect(after.json()).toMatchObject({ balanceMicroUSD: 2_000_000 - price });
    expect((await cli(['billing', 'wallet'], env)).stdout).toContain(`(${2_000_000 - price} micro-USD)`);

    const usage = await cli(['usage', '--json'], env);
    expect(usage.code, usage.stderr).toBe(0);
    expect(usage.json()).toMatchObject({ costMicroUsd: price, byModel: [expect.objectContaining({ model: PRICED, priced: true, costMicroUsd: price })] });
    const plain = await cli(['usage'], env);
    expect(plain.stdout.split('\n')[0]).toBe('model\tinput\toutput\tcache read\tcost');
    expect(plain.stdout).toMatch(new RegExp(`^${PRICED}\\t\\d+\\t\\d+\\t\\d+\\t\\$${(price / 1e6).toFixed(4).replace('.', '\\.')}$`, 'm'));
  });
});

