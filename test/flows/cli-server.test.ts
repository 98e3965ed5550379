import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../support/backends.ts';
import { startTestSvc, type TestSvc } from '../support/svc.ts';
import { dashboardSession } from '../support/cli.ts';
import { insertKey, type Role } from '../../src/modules/conductor/identity/index.ts';
import { chargeCredit } from '../../src/modules/conductor/billing/index.ts';

/**
 * The server routes the CLI signs in through and reads, over HTTP, on both storage backends: device codes, the
 * dashboard's sign-in and approval pages, the credit wallet and spend cap.
 */
const PEPPER = 'test-pepper-0123456789abcdef';

describe.each(backends)('CLI server routes on $name', (backend) => {
  let svc: TestSvc;
  let cleanup: () => Promise<void>;
  const keys: Partial<Record<Role, string>> = {};

  beforeAll(async () => {
    const db = await backend.setup();
    cleanup = db.cleanup;
    svc = await startTestSvc({ DATABASE_URL: db.url, AGENT_API_KEY_PEPPER: PEPPER, AGENT_ORC_ADMIN_TENANT: 'default', SVC_BILLING: 'ledger' });
    for (const role of ['admin', 'member', 'viewer'] as const) {
      keys[role] = (await insertKey({ db: svc.server.built.database!.db, pepper: PEPPER, keyEnv: 'test' }, 'default', { name: role, role, createdBy: null, expiresAt: null })).token;
    }
  });
  afterAll(async () => {
    await svc?.stop();
    await cleanup?.();
  });

  const token = (deviceCode: string) => svc.api('/api/device/token', { key: null, method: 'POST', json: { deviceCode } });

  describe('device login', () => {
    it('issues codes without a key and answers polls the OAuth way until the code is redeemed once', async () => {
      const res = await svc.api('/api/device/code', { key: null, method: 'POST', json: { label: 'ci-bot@host' } });
      expect(res.status).toBe(200);
      const code = await res.json();
      expect(code).toMatchObject({ deviceCode: expect.any(String), userCode: expect.stringMatching(/^[A-Z]{4}-[A-Z]{4}$/), expiresIn: 900, interval: 5 });
      const pending = await token(code.deviceCode);
      expect(pending.status).toBe(400);
      expect(await pending.json()).toMatchObject({ error: 'authorization_pending' });

      const dash = await dashboardSession(svc.url, keys.admin!);
      expect((await dash.decideDevice(code.userCode.toLowerCase().replace('-', ' '), 'approve')).status).toBe(200);
      const approved = await token(code.deviceCode);
      expect(approved.status).toBe(200);
      const grant = await approved.json();
      expect(grant).toEqual({ apiKey: expect.stringMatching(/^ao_test_/), keyId: expect.stringMatching(/^key_/), role: 'admin', org: 'default' });
      expect((await svc.api('/api/whoami', { key: grant.apiKey })).status).toBe(200);
      const again = await token(code.deviceCode);
      expect(await again.json()).toMatchObject({ error: 'invalid_grant' });
    });

    it('answers access_denied after a denial and invalid_grant for an unknown code', async () => {
      const code = await (await svc.api('/api/device/code', { key: null, method: 'POST' })).json();
      const dash = await dashboardSession(svc.url, keys.member!);
      await dash.decideDevice(code.userCode, 'deny');
      expect(await (await token(code.deviceCode)).json()).toMatchObject({ error: 'access_denied' });
      expect(await (await token('nope')).json()).toMatchObject({ error: 'invalid_grant' });
    });

    it('keeps device codes out of sight of queries that do not name them (row-level security)', async () => {
      await svc.api('/api/device/code', { key: null, method: 'POST', json: { label: 'hidden' } });
      const rows = await svc.server.built.database!.db.selectFrom('device_codes').select('user_code').execute();
      expect(rows).toEqual([]);
    });
  });

  describe('dashboard', () => {
    it('signs in with a tenant key into an HttpOnly, SameSite session cookie; bad and viewer keys are refused', async () => {
      const ok = await fetch(`${svc.url}/dashboard/sign-in`, { method: 'POST', body: new URLSearchParams({ key: keys.member!, next: '/cli-auth?x=1' }), redirect: 'manual' });
      expect(ok.status).toBe(303);
      expect(ok.headers.get('location')).toBe('/cli-auth?x=1');
      expect(ok.headers.get('set-cookie')).toMatch(/^svc_dash=[^;]+; Max-Age=43200; Path=\/; HttpOnly; SameSite=Lax$/);
      const bad = await fetch(`${svc.url}/dashboard/sign-in`, { method: 'POST', body: new URLSearchParams({ key: 'ao_test_wrongwrongwrongwrongwrong0' }), redirect: 'manual' });
      expect(bad.status).toBe(401);
      expect(bad.headers.get('set-cookie')).toBeNull();
      const viewer = await fetch(`${svc.url}/dashboard/sign-in`, { method: 'POST', body: new URLSearchParams({ key: keys.viewer! }), redirect: 'manual' });
      expect(viewer.status).toBe(403);
      const crossSite = await fetch(`${svc.url}/dashboard/sign-in`, { method: 'POST', headers: { origin: 'https://evil.example' }, body: new URLSearchParams({ key: keys.member! }), redirect: 'manual' });
      expect(crossSite.status).toBe(403);
      const offsite = await fetch(`${svc.url}/dashboard/sign-in`, { method: 'POST', body: new URLSearchParams({ key: keys.member!, next: '//evil.example/' }), redirect: 'manual' });
      expect(offsite.headers.get('location')).toBe('/dashboard');
    });

    it('sends a visitor without a session to sign in, and refuses a malformed CLI link or a form without its CSRF token', async () => {
      const anon = await fetch(`${svc.url}/cli-auth?port=5555&state=abcdefghijklmnop1234`, { redirect: 'manual' });
      expect(anon.status).toBe(303);
      expect(anon.headers.get('location')).toBe('/dashboard/sign-in?next=%2Fcli-auth%3Fport%3D5555%26state%3Dabcdefghijklmnop1234');
      const dash = await dashboardSession(svc.url, keys.admin!);
      const page = await dash.get('/cli-auth?port=5555&state=abcdefghijklmnop1234&label=my-laptop');
      expect(page.status).toBe(200);
      expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      expect(await page.text()).toContain('my-laptop');
      expect((await dash.get('/cli-auth?port=99999&state=short')).status).toBe(400);
      const forged = await fetch(`${svc.url}/cli-auth`, { method: 'POST', headers: { cookie: dash.cookie }, body: new URLSearchParams({ port: '5555', state: 'abcdefghijklmnop1234', decision: 'approve' }) });
      expect(forged.status).toBe(403);
    });

    it('ends the session when the key it was opened with is revoked', async () => {
      const key = await (await svc.api('/api/api-keys', { method: 'POST', json: { name: 'short-lived' } })).json();
      const dash = await dashboardSession(svc.url, key.token);
      expect((await dash.get('/dashboard')).status).toBe(200);
      await svc.api(`/api/api-keys/${key.id}`, { method: 'DELETE' });
      expect((await dash.get('/dashboard')).status).toBe(303);
    });
  });

  describe('billing', () => {
    it('keeps the wallet to members and up, and the spend cap writable by admins only', async () => {
      expect((await svc.api('/api/billing/wallet', { key: keys.viewer })).status).toBe(403);
      expect((await svc.api('/api/billing/wallet', { key: keys.member })).status).toBe(200);
      expect((await svc.api('/api/spend-cap', { key: keys.member })).status).toBe(200);
      expect((await svc.api('/api/spend-cap', { key: keys.member, method: 'PUT', json: { limit_usd_cents: 100 } })).status).toBe(403);
      const set = await svc.api('/api/spend-cap', { key: keys.admin, method: 'PUT', json: { limit_usd_cents: 100, billing_email: 'ops@example.com' } });
      expect(set.status).toBe(200);
      expect(await set.json()).toMatchObject({ month: { limit_usd_cents: 100, user_set: true }, day: { limit_usd_cents: 100 }, billing_email: 'ops@example.com' });
    });

    it('refuses a daily limit, a negative or fractional amount', async () => {
      const put = (json: unknown) => svc.api('/api/spend-cap', { method: 'PUT', json });
      expect(await (await put({ limit_usd_cents: 100, day: { limit_usd_cents: 5 } })).json()).toEqual({ error: 'day: the daily window cannot be set; it follows the system default' });
      expect((await put({ limit_usd_cents: -1 })).status).toBe(400);
      expect((await put({ limit_usd_cents: 1.5 })).status).toBe(400);
    });

    it('keeps grants to the operator and charges a run once', async () => {
      expect((await svc.api('/api/billing/grants', { key: keys.member, method: 'POST', json: { tenantId: 'default', amountMicroUSD: 5 } })).status).toBe(403);
      const granted = await svc.api('/api/billing/grants', { method: 'POST', json: { tenantId: 'default', amountMicroUSD: 2_000_000 } });
      expect(granted.status).toBe(201);
      const db = svc.server.built.database!.db;
      expect(await chargeCredit(db, { tenantId: 'default', amountMicroUsd: 500_000, description: 'run', runId: 'run_once' })).toBe(true);
      expect(await chargeCredit(db, { tenantId: 'default', amountMicroUsd: 500_000, description: 'run', runId: 'run_once' })).toBe(false);
      const wallet = await (await svc.api('/api/billing/wallet')).json();
      expect(wallet).toMatchObject({ configured: true, balanceMicroUSD: 1_500_000, balanceUSD: 1.5 });
      const cap = await (await svc.api('/api/spend-cap')).json();
      expect(cap.month.spent_usd_cents).toBe(50);
    });
  });
});

describe('billing grants without an operator tenant', () => {
  it('are not found', async () => {
    const svc = await startTestSvc();
    try {
      expect((await svc.api('/api/billing/grants', { method: 'POST', json: { tenantId: 'default', amountMicroUSD: 5 } })).status).toBe(404);
    } finally {
      await svc.stop();
    }
  });
});
