import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, tempDir } from '../support/cli.ts';
import { runSvc, startSvcProcess } from '../support/process.ts';
import { keyOf, startOperatorSvc } from '../support/tenants.ts';
import type { TestSvc } from '../support/svc.ts';

/**
 * A conductor without a billing client (seed 000, "Billing"): in dev (SVC_BILLING unset, or off) the wallet and
 * checkout answer 503 `no billing client…` while runs go on ungated; outside dev a conductor starts so only when the
 * operator says SVC_BILLING=off, and otherwise refuses to start naming the variable.
 */
const NO_CLIENT = { error: 'no billing client: this server runs without billing (SVC_BILLING=off)' };

describe('billing without a billing client', () => {
  let svc: TestSvc;
  beforeAll(async () => {
    svc = await startOperatorSvc();
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('answers the wallet, checkout and portal with 503, after the role checks, and runs without a credit gate', async () => {
    const wallet = await svc.api('/api/billing/wallet');
    expect(wallet.status).toBe(503);
    expect(await wallet.json()).toEqual(NO_CLIENT);
    const admin = await keyOf(svc, 'default', 'admin');
    const checkout = await svc.api('/api/billing/checkout', { method: 'POST', key: admin, json: { cents: 1000 } });
    expect(checkout.status).toBe(503);
    expect(await checkout.json()).toEqual(NO_CLIENT);
    expect((await svc.api('/api/billing/portal', { method: 'POST', key: admin })).status).toBe(503);
    // what a role may not do stays 403
    expect((await svc.api('/api/billing/wallet', { key: await keyOf(svc, 'default', 'viewer') })).status).toBe(403);
    expect((await svc.api('/api/billing/checkout', { method: 'POST', key: await keyOf(svc, 'default', 'member'), json: { cents: 1000 } })).status).toBe(403);

    expect((await svc.api('/api/profiles', { method: 'POST', json: { name: 'free', runtime: 'general', model: 'demo:echo' } })).status).toBe(201);
    expect((await svc.api('/api/runs', { method: 'POST', json: { profile: 'free', prompt: 'no gate' } })).status).toBe(202);
  });

  it('makes `svc billing wallet` fail (exit 1) with the server\'s reason', async () => {
    const r = await cli(['billing', 'wallet'], { SVC_CONFIG_DIR: tempDir(), SVC_API_URL: svc.url, SVC_API_KEY: svc.key });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('no billing client: this server runs without billing (SVC_BILLING=off)');
  });
});

describe('a conductor outside dev', () => {
  const LIVE = { AGENT_ORC_ENV: 'live', AGENT_API_KEY_PEPPER: 'p'.repeat(32), SVC_SECRETS_KEY: 's'.repeat(32), DATABASE_URL: 'memory' };

  it('refuses to start without a billing client, and starts when the operator runs it without billing', async () => {
    const refused = await runSvc(['serve', '--role=all', '--port=0'], { ...LIVE, SVC_DATA_DIR: tempDir() });
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim()).toBe('svc: invalid configuration: SVC_BILLING: required when AGENT_ORC_ENV is "live" (not dev): stripe or ledger for a billing client, or off to run without billing');

    const p = await startSvcProcess(['--role=all'], { ...LIVE, SVC_BILLING: 'off', SVC_DATA_DIR: tempDir(), SVC_BOOTSTRAP_TOKEN: 'ao_live_billingoffbillingoff01' });
    try {
      const headers = { authorization: 'Bearer ao_live_billingoffbillingoff01' };
      expect((await fetch(`${p.url}/healthz`)).status).toBe(200);
      expect(await (await fetch(`${p.url}/api/billing/wallet`, { headers })).json()).toEqual(NO_CLIENT);
    } finally {
      expect(await p.stop()).toBe(0);
    }
  }, 90_000);
});
