import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { withTenant } from '../../src/db/index.ts';
import { startAgentsHarness, type AgentsHarness } from '../support/agents.ts';
import type { LoggedRequest } from '../support/fake-provider.ts';
import { readSse } from '../support/sse.ts';

/**
 * A tenant's own provider key (`PUT /api/providers/<provider>/key`) is what its runs call the model with, wherever
 * they start: POST /api/runs, an automation's firing, a workflow node, a published agent's chat and /v1, on the general
 * runtime and on Claude Code and Codex; a tenant without one runs on the operator's key. Read from the Authorization
 * (OpenAI) and x-api-key (Anthropic) headers the fake provider received. A changed key applies from the next run, a
 * session keeps the provider it started with, and a key that no longer opens refuses the run. Under
 * `SVC_BILLING=ledger`, runs on the tenant's own key are metered but never charged platform credit nor refused for the
 * lack of it; runs on the operator's key are charged.
 */
const WAIT = { timeout: 30_000, interval: 50 };
const OPERATOR = { openai: 'sk-operator-openai-0000', anthropic: 'sk-ant-operator-0000' };
const OWN = { openai: 'sk-tenant-openai-1111', anthropic: 'sk-ant-tenant-1111' };
const PROFILES = [
  { name: 'gpt', runtime: 'general', model: 'openai:gpt-4o' },
  { name: 'claude', runtime: 'general', model: 'anthropic:claude-sonnet-4-5' },
];

let h: AgentsHarness;
const keys: Record<string, string> = {};
const db = () => h.svc.server.built.database!.db;
const as = (tenant: string) => (path: string, init: RequestInit & { json?: unknown } = {}) => h.svc.api(path, { ...init, key: keys[tenant] });
let unique = 0;
const marker = (what: string) => `${what} #${++unique}`;

async function tenant(id: string, opts: { own?: Partial<typeof OWN>; credit?: number } = {}): Promise<void> {
  keys[id] = await h.otherOrg(id);
  for (const p of PROFILES) expect((await as(id)('/api/profiles', { method: 'POST', json: p })).status).toBe(201);
  for (const [provider, key] of Object.entries(opts.own ?? {})) expect((await as(id)(`/api/providers/${provider}/key`, { method: 'PUT', json: { key } })).status).toBe(200);
  if (opts.credit) expect((await h.svc.api('/api/billing/grants', { method: 'POST', json: { tenantId: id, amountMicroUSD: opts.credit } })).status).toBe(201);
}

/** The model request that carried `text` (each run's prompt is unique). */
const requestWith = (text: string): Promise<LoggedRequest> => h.fake.when(() => h.fake.requests.find((r) => JSON.stringify(r.body ?? '').includes(text)));
/** The credential the fake provider received: `Authorization` on the OpenAI wires, `x-api-key` on Anthropic's. */
const credential = (r: LoggedRequest) => (r.wire === 'anthropic' ? r.headers['x-api-key'] : r.headers.authorization?.replace(/^Bearer /, ''));

async function streamToEnd(t: string, runId: string): Promise<void> {
  const frames = await readSse(await as(t)(`/api/runs/${runId}/stream`));
  expect(frames.at(-1)!.event.type).toBe('result');
}

/** Each surface starts one run of profile `profile` with prompt `text` as tenant `t`, waits for its end and returns its id. */
const SURFACES: Record<string, (t: string, profile: string, text: string) => Promise<string>> = {
  async 'POST /api/runs'(t, profile, text) {
    const res = await as(t)('/api/runs', { method: 'POST', json: { profile, prompt: text } });
    expect(res.status).toBe(202);
    const { runId } = (await res.json()) as { runId: string };
    await streamToEnd(t, runId);
    return runId;
  },
  async 'an automation firing'(t, profile, text) {
    const created = (await (await as(t)('/api/automations', { method: 'POST', json: { name: `a${unique}`, profile, prompt: text, cron: '0 9 * * *' } })).json()) as { id: string };
    const fired = await as(t)(`/api/automations/${created.id}/run`, { method: 'POST' });
    expect(fired.status).toBe(202);
    const { runId } = (await fired.json()) as { runId: string };
    await streamToEnd(t, runId);
    return runId;
  },
  async 'a workflow node'(t, profile, text) {
    const res = await as(t)('/api/workflows/runs', { method: 'POST', json: { nodes: [{ id: 'only', profile, prompt: text }] } });
    expect(res.status).toBe(202);
    const { id } = ((await res.json()) as { workflowRun: { id: string } }).workflowRun;
    const run = await vi.waitFor(async () => {
      const wr = ((await (await as(t)(`/api/workflows/runs/${id}`)).json()) as { workflowRun: { statusLabel: string; nodes: Array<{ runId: string }> } }).workflowRun;
      expect(wr.statusLabel).toBe('completed');
      return wr;
    }, WAIT);
    return run.nodes[0].runId;
  },
  async 'a published agent chat'(t, profile, text) {
    const slug = `${t}-${profile}`;
    const published = await as(t)(`/api/profiles/${profile}/published`);
    if (published.status === 404) expect((await as(t)(`/api/profiles/${profile}/publish`, { method: 'POST', json: { slug } })).status).toBe(201);
    const { token } = (await (await as(t)(`/api/profiles/${profile}/keys`, { method: 'POST', json: { label: `k${unique}` } })).json()) as { token: string };
    const res = await fetch(`${h.svc.url}/chat/${slug}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ message: text }) });
    expect(res.status).toBe(200);
    const runs = (await (await as(t)('/api/runs')).json()) as Array<{ id: string; subTask: { prompt: string } }>;
    return runs.find((r) => r.subTask.prompt === text)!.id;
  },
};

/** The billing subscriber's jobs for a run, by state. */
const billingJobs = async (runId: string) =>
  (await sql<{ state: string }>`select state::text as state from pgboss.job where name = 'hooks.run-finished.billing' and data->>'runId' = ${runId}`.execute(db())).rows.map((r) => r.state);
const charges = (t: string) =>
  withTenant(db(), t, async (tx) => (await sql<{ run_id: string }>`select run_id from credit_ledger where kind = 'charge' order by run_id`.execute(tx)).rows.map((r) => r.run_id));
const balance = async (t: string) => ((await (await as(t)('/api/billing/wallet')).json()) as { balanceMicroUSD: number }).balanceMicroUSD;
const billed = (runIds: string[]) => vi.waitFor(async () => expect(await Promise.all(runIds.map(billingJobs))).toEqual(runIds.map(() => ['completed'])), WAIT);

beforeAll(async () => {
  h = await startAgentsHarness({ SVC_BILLING: 'ledger', OPENAI_API_KEY: OPERATOR.openai, ANTHROPIC_API_KEY: OPERATOR.anthropic });
  await tenant('own', { own: OWN, credit: 1_000_000 });
  await tenant('plain', { credit: 1_000_000 });
}, 60_000);
afterAll(async () => {
  await h?.stop();
});

describe.each(Object.keys(SURFACES))('a run started by %s', (surface) => {
  it.each([
    ['gpt', 'openai'],
    ['claude', 'anthropic'],
  ] as const)("calls the %s profile's provider with the tenant's own key, and with the operator's for a tenant without one", async (profile, provider) => {
    const mine = marker(`${surface} own ${profile}`);
    const runId = await SURFACES[surface]('own', profile, mine);
    expect(credential(await requestWith(mine))).toBe(OWN[provider]);
    // the key travels with the run only: neither the run nor its events hold it
    const run = await (await as('own')(`/api/runs/${runId}`)).text();
    expect(run).toContain(mine);
    expect(run).not.toContain(OWN[provider]);

    const theirs = marker(`${surface} plain ${profile}`);
    await SURFACES[surface]('plain', profile, theirs);
    expect(credential(await requestWith(theirs))).toBe(OPERATOR[provider]);
  });
});

// Claude Code (runtime_a) speaks to anthropic and Codex (runtime_b) to openai: the tenant's key reaches their child process
describe('a run of the SDK runtimes', { timeout: 120_000 }, () => {
  it.each([
    ['runtime_a', 'claude-sonnet-4-5', 'anthropic'],
    ['runtime_b', 'gpt-5.5', 'openai'],
  ] as const)("calls %s's provider with the tenant's own key, and with the operator's for a tenant without one", async (runtime, model, provider) => {
    for (const t of ['own', 'plain']) {
      const created = await as(t)('/api/profiles', { method: 'POST', json: { name: runtime.replace('_', '-'), runtime, model } });
      expect(created.status).toBe(201);
    }
    const mine = marker(`${runtime} own`);
    await SURFACES['POST /api/runs']('own', runtime.replace('_', '-'), mine);
    expect(credential(await requestWith(mine))).toBe(OWN[provider]);
    const theirs = marker(`${runtime} plain`);
    await SURFACES['POST /api/runs']('plain', runtime.replace('_', '-'), theirs);
    expect(credential(await requestWith(theirs))).toBe(OPERATOR[provider]);
  });
});

describe('the /v1 agents API', () => {
  // a <provider>/<id> model names the tenant's own key (without one its turn fails naming PUT /api/providers/…);
  // the fallback on the operator's side is a platform model, svc/<aggregator>/<id>
  it("calls a <provider>/<id> model with the tenant's own key, and a platform model with the operator's aggregator key", async () => {
    for (const [t, model, expected] of [
      ['own', 'openai/gpt-4o', OWN.openai],
      ['own', 'anthropic/claude-sonnet-4-5', OWN.anthropic],
      ['plain', 'svc/fake/gpt-4o', 'fake-aggregator-key'],
    ]) {
      const client = h.clientFor(keys[t]);
      const text = marker(`v1 ${model}`);
      const agent = await client.beta.agents.create({ model });
      const session = await client.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'none' }, input: text });
      expect(credential(await requestWith(text))).toBe(expected);
      await vi.waitFor(async () => expect((await client.beta.agents.sessions.retrieve(session.id)).status).toBe('idle'), WAIT);
    }
  });
});

describe('changing the key', () => {
  it('takes effect from the next run: a new key is used at once, and after DELETE the operator key again', async () => {
    await tenant('switch', { credit: 1_000_000 });
    const run = async () => {
      const text = marker('switch');
      await SURFACES['POST /api/runs']('switch', 'gpt', text);
      return credential(await requestWith(text));
    };
    expect(await run()).toBe(OPERATOR.openai);
    expect((await as('switch')('/api/providers/openai/key', { method: 'PUT', json: { key: 'sk-first-2222' } })).status).toBe(200);
    expect(await run()).toBe('sk-first-2222');
    expect((await as('switch')('/api/providers/openai/key', { method: 'PUT', json: { key: 'sk-second-3333' } })).status).toBe(200);
    expect(await run()).toBe('sk-second-3333');
    expect((await as('switch')('/api/providers/openai/key', { method: 'DELETE' })).status).toBe(204);
    expect(await run()).toBe(OPERATOR.openai);
  });

  it("refuses a run whose key no longer opens (the secrets key changed) with 409, never falling back to the operator's", async () => {
    await tenant('stale', { credit: 1_000_000 });
    // sealed under another secrets key
    await withTenant(db(), 'stale', (tx) => sql`insert into provider_keys (tenant_id, provider, sealed, key_hint) values ('stale', 'openai', 'v1.AAAAAAAAAAAAAAAA.AAAA.AAAAAAAAAAAAAAAAAAAAAA', '…0000')`.execute(tx));
    const res = await as('stale')('/api/runs', { method: 'POST', json: { profile: 'gpt', prompt: 'a stale key' } });
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({ error: expect.stringContaining('set it again with PUT /api/providers/openai/key') });
    expect(await (await as('stale')('/api/runs')).json()).toEqual([]);
    expect(h.fake.requests.some((r) => JSON.stringify(r.body ?? '').includes('a stale key'))).toBe(false);
  });
});

describe('a session whose profile changed since it started', () => {
  it("keeps calling the session's own model with that provider's key, never another provider's key", async () => {
    await tenant('moved', { own: { anthropic: 'sk-ant-moved-5555' }, credit: 1_000_000 });
    const first = await as('moved')('/api/runs', { method: 'POST', json: { profile: 'gpt', prompt: marker('moved first') } });
    const { runId, sessionId } = (await first.json()) as { runId: string; sessionId: string };
    await streamToEnd('moved', runId);
    // the profile now names anthropic, whose key the tenant set; the session keeps the model it started with (openai)
    expect((await as('moved')('/api/profiles/gpt', { method: 'PUT', json: { ...PROFILES[1], name: 'gpt' } })).status).toBe(200);
    const text = marker('moved again');
    const res = await as('moved')('/api/runs', { method: 'POST', json: { profile: 'gpt', prompt: text, sessionId } });
    expect(res.status).toBe(202);
    await streamToEnd('moved', ((await res.json()) as { runId: string }).runId);
    const request = await requestWith(text);
    expect(request.wire).toBe('responses');
    expect(credential(request)).toBe(OPERATOR.openai);
  });
});

describe('billing in ledger mode', () => {
  it("meters runs on the tenant's own key without charging credit, and charges runs on the operator's", async () => {
    const ownRuns = [await SURFACES['POST /api/runs']('own', 'gpt', marker('billing own')), await SURFACES['an automation firing']('own', 'claude', marker('billing own'))];
    const plainRuns = [await SURFACES['POST /api/runs']('plain', 'gpt', marker('billing plain'))];
    await billed([...ownRuns, ...plainRuns]);

    const all = (t: string) => as(t)('/api/runs').then(async (r) => ((await r.json()) as Array<{ id: string }>).map((x) => x.id));
    await billed(await all('own'));
    expect(await charges('own')).toEqual([]);
    expect(await balance('own')).toBe(1_000_000);
    const usage = (await (await as('own')('/api/usage')).json()) as { costMicroUsd: number };
    expect(usage.costMicroUsd).toBeGreaterThan(0);

    expect(await charges('plain')).toEqual(expect.arrayContaining(plainRuns));
    expect(await balance('plain')).toBeLessThan(1_000_000);
  });

  it("lets a tenant without credit run on its own key, and still refuses it the operator's", async () => {
    await tenant('broke', { own: { openai: 'sk-broke-own-4444' } });
    const text = marker('broke own');
    const runId = await SURFACES['POST /api/runs']('broke', 'gpt', text);
    expect(credential(await requestWith(text))).toBe('sk-broke-own-4444');
    await billed([runId]);
    expect(await charges('broke')).toEqual([]);
    expect(await balance('broke')).toBe(0);

    const refused = await as('broke')('/api/runs', { method: 'POST', json: { profile: 'claude', prompt: 'on the operator key' } });
    expect(refused.status).toBe(402);
    expect(((await refused.json()) as { error: string }).error).toBe('credits_exhausted');
  });
});
