import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSvc, type TestSvc } from '../support/svc.ts';
import { cli, startFakeApi, tempDir, type FakeApi } from '../support/cli.ts';
import { insertKey } from '../../src/modules/conductor/identity/index.ts';
import { chargeCredit } from '../../src/modules/conductor/billing/index.ts';

/** `svc billing wallet`, `billing cap`, `billing cap set` against the credit ledger and spend cap of our server. */
const OWNER = 'ao_test_bootstrapbootstrapbootstrap01';
const PEPPER = 'test-pepper-0123456789abcdef';

const CAP = {
  enabled: true,
  month: { limit_usd_cents: 10000, limit_usd: 100, spent_usd_cents: 0, spent_usd: 0, remaining_usd_cents: 10000, user_set: false, resets_at: '2030-01-01T00:00:00.000Z' },
  day: { limit_usd_cents: 2500, limit_usd: 25, spent_usd_cents: 0, spent_usd: 0, remaining_usd_cents: 2500, user_set: false, resets_at: '2029-12-02T00:00:00.000Z' },
  billing_email: null,
};

describe('svc billing', () => {
  let svc: TestSvc;
  let env: Record<string, string>;
  beforeAll(async () => {
    svc = await startTestSvc({ AGENT_API_KEY_PEPPER: PEPPER, AGENT_ORC_ADMIN_TENANT: 'default', SVC_BILLING: 'ledger', SVC_SPEND_CAP_MONTHLY_CENTS: '10000', SVC_SPEND_CAP_DAILY_CENTS: '2500' });
    env = { SVC_CONFIG_DIR: tempDir(), SVC_API_URL: svc.url, SVC_API_KEY: OWNER };
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('shows an unconfigured wallet until credit is granted, then the ledger balance', async () => {
    const before = await cli(['billing', 'wallet', '--json'], env);
    expect(before.code, before.stderr).toBe(0);
    // a ledger sells nothing (checkout needs Stripe): no packs
    expect(before.json()).toEqual({ configured: false, balanceMicroUSD: 0, balanceUSD: 0, packs: [] });
    const grant = await svc.api('/api/billing/grants', { method: 'POST', json: { tenantId: 'default', amountMicroUSD: 12_340_000, description: 'welcome credit' } });
    expect(grant.status).toBe(201);
    const after = await cli(['billing', 'wallet', '--json'], env);
    expect(after.json()).toMatchObject({ configured: true, balanceMicroUSD: 12_340_000, balanceUSD: 12.34 });
    const plain = await cli(['billing', 'wallet'], env);
    expect(plain.stdout).toContain('configured: yes\n');
    expect(plain.stdout).toContain('balance: $12.34 (12340000 micro-USD)\n');
  });

  it('shows the month and day windows of the spend cap', async () => {
    const r = await cli(['billing', 'cap', '--json'], env);
    expect(r.code, r.stderr).toBe(0);
    const cap = r.json();
    expect(cap).toEqual({
      enabled: true,
      month: { limit_usd_cents: 10000, limit_usd: 100, spent_usd_cents: 0, spent_usd: 0, remaining_usd_cents: 10000, user_set: false, resets_at: expect.any(String) },
      day: { limit_usd_cents: 2500, limit_usd: 25, spent_usd_cents: 0, spent_usd: 0, remaining_usd_cents: 2500, user_set: false, resets_at: expect.any(String) },
      billing_email: null,
    });
    expect(new Date(cap.month.resets_at).getUTCDate()).toBe(1);
    const plain = await cli(['billing', 'cap'], env);
    expect(plain.stdout).toMatch(/^month\tlimit \$100\.00 \(default\)\tspent \$0\.00\tremaining \$100\.00\tresets /m);
  });

  it('sets the monthly cap with --yes, and reverts it with default/none/clear', async () => {
    const set = await cli(['billing', 'cap', 'set', '$1,234.50', '--yes', '--json'], env);
    expect(set.code, set.stderr).toBe(0);
    expect(set.json().month).toMatchObject({ limit_usd_cents: 123450, limit_usd: 1234.5, user_set: true });
    expect((await (await svc.api('/api/spend-cap')).json()).month.limit_usd_cents).toBe(123450);
    for (const word of ['default', 'NONE', 'Clear']) {
      await cli(['billing', 'cap', 'set', '7', '--yes'], env);
      const reverted = await cli(['billing', 'cap', 'set', word, '--yes', '--json'], env);
      expect(reverted.code, reverted.stderr).toBe(0);
      expect(reverted.json().month).toMatchObject({ limit_usd_cents: 10000, user_set: false });
    }
  });

  it('warns on stderr when the new cap is below what was already spent this month', async () => {
    await chargeCredit(svc.server.built.database!.db, { tenantId: 'default', amountMicroUsd: 30_000_000, description: 'usage' });
    const r = await cli(['billing', 'cap', 'set', '20', '--yes'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/the new cap \$20\.00 is below the \$30\.00 already spent this month/);
    expect(r.stdout).toMatch(/^month\tlimit \$20\.00\tspent \$30\.00\tremaining \$0\.00/m);
    expect((await cli(['billing', 'wallet', '--json'], env)).json().balanceMicroUSD).toBe(12_340_000 - 30_000_000);
  });

  it('lets a member read the cap but not set it: a 403 is a failure (exit 1), not an authentication failure (3)', async () => {
    const member = await insertKey({ db: svc.server.built.database!.db, pepper: PEPPER, keyEnv: 'test' }, 'default', { name: 'member', role: 'member', createdBy: null, expiresAt: null });
    const memberEnv = { ...env, SVC_API_KEY: member.token };
    expect((await cli(['billing', 'cap'], memberEnv)).code).toBe(0);
    const r = await cli(['billing', 'cap', 'set', '5', '--yes'], memberEnv);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/permission denied: setting the spend cap needs role admin/);
    // the raw call too: it prints the refusal and exits 1
    const raw = await cli(['api', 'PUT', '/api/spend-cap', '--data', '{"limit_usd_cents":500}'], memberEnv);
    expect(raw.code).toBe(1);
    expect(JSON.parse(raw.stdout)).toEqual({ error: 'setting the spend cap needs role admin or owner' });
    // while a key the server does not know is still an authentication failure (3)
    expect((await cli(['billing', 'cap'], { ...env, SVC_API_KEY: 'ao_test_notakeynotakeynotakey00' })).code).toBe(3);
  });

  describe('amount forms and refusals (a stand-in server records what is sent)', () => {
    let fake: FakeApi;
    let fakeEnv: Record<string, string>;
    beforeAll(async () => {
      fake = await startFakeApi({ 'GET /api/spend-cap': { status: 200, body: CAP }, 'PUT /api/spend-cap': { status: 200, body: CAP } });
      fakeEnv = { SVC_CONFIG_DIR: tempDir(), SVC_API_URL: fake.url, SVC_API_KEY: OWNER };
    });
    afterAll(async () => {
      await fake?.close();
    });
    const puts = () => fake.requests.filter((r) => r.method === 'PUT').map((r) => JSON.parse(r.body));

    it.each([
      ['10', 1000],
      ['10.5', 1050],
      ['10.50', 1050],
      ['$10', 1000],
      ['1,000', 100000],
    ])('sends %s as %i cents', async (amount, cents) => {
      fake.requests.length = 0;
      const r = await cli(['billing', 'cap', 'set', amount, '--yes'], fakeEnv);
      expect(r.code, r.stderr).toBe(0);
      expect(puts()).toEqual([{ limit_usd_cents: cents }]);
    });

    it.each([
      ['-5', /negative/],
      ['10.999', /more than two decimal places/],
      ['1,00', /not an amount/],
      ['lots', /not an amount/],
    ])('refuses %s with exit 2 before any request', async (amount, message) => {
      fake.requests.length = 0;
      const r = await cli(['billing', 'cap', 'set', amount, '--yes'], fakeEnv);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(fake.requests).toEqual([]);
    });

    it('requires --yes in a script (exit 2, nothing sent) and refuses the daily window', async () => {
      fake.requests.length = 0;
      const noYes = await cli(['billing', 'cap', 'set', '10'], fakeEnv);
      expect(noYes.code).toBe(2);
      expect(noYes.stderr).toMatch(/--yes is required/);
      const day = await cli(['billing', 'cap', 'set', '10', '--yes', '--window', 'day'], fakeEnv);
      expect(day.code).toBe(2);
      expect(day.stderr).toMatch(/the daily window cannot be set/);
      expect(fake.requests).toEqual([]);
    });

    it('is not blocked by a failed pre-read of the current spend', async () => {
      const broken = await startFakeApi({ 'GET /api/spend-cap': { status: 500, body: { error: 'boom' } }, 'PUT /api/spend-cap': { status: 200, body: CAP } });
      try {
        const r = await cli(['billing', 'cap', 'set', '10', '--yes'], { ...fakeEnv, SVC_API_URL: broken.url });
        expect(r.code, r.stderr).toBe(0);
        expect(r.stderr).toMatch(/could not read the current spend/);
        expect(broken.requests.map((q) => q.method)).toEqual(['GET', 'PUT']);
      } finally {
        await broken.close();
      }
    });
  });
});
