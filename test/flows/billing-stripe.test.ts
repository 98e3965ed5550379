import { sql } from 'kysely';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTenant } from '../../src/db/index.ts';
import { insertKey, type Role } from '../../src/modules/conductor/identity/index.ts';
import { cli, tempDir } from '../support/cli.ts';
import { startFakeStripe, type FakeStripe } from '../support/fake-stripe.ts';
import { startTestSvc, type TestSvc } from '../support/svc.ts';

/**
 * Top-ups through Stripe (SVC_BILLING=stripe): svc drives the official `stripe` package against a fake Stripe API
 * over real HTTP; the webhook is signed with the package's own test-header helper and verified by its
 * `webhooks.constructEvent`. A paid checkout credits the wallet once; the same delivery replayed, or another event for
 * the same checkout, changes nothing; a forged signature is 400 and changes nothing.
 */
const PEPPER = 'stripe-test-pepper-0123456789';
const SECRET = 'whsec_testtesttesttesttest0123';
const SK = 'sk_test_0123456789abcdefghij';

let svc: TestSvc;
let fake: FakeStripe;
const signer = new Stripe(SK);
const sign = (payload: string, secret = SECRET) => signer.webhooks.generateTestHeaderString({ payload, secret });
const keyOf = async (role: Role) =>
  (await insertKey({ db: svc.server.built.database!.db, pepper: PEPPER, keyEnv: 'test' }, 'default', { name: role, role, createdBy: null, expiresAt: null })).token;
const balance = async () => ((await (await svc.api('/api/billing/wallet')).json()) as { balanceMicroUSD: number }).balanceMicroUSD;
const webhook = (payload: string, signature: string) => fetch(`${svc.url}/api/stripe/webhook`, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': signature }, body: payload });
const events = () => withTenant(svc.server.built.database!.db, 'default', async (tx) => (await sql<{ id: string }>`select id from billing_events`.execute(tx)).rows.map((r) => r.id));

beforeAll(async () => {
  fake = await startFakeStripe();
  svc = await startTestSvc({ DATABASE_URL: 'memory', AGENT_API_KEY_PEPPER: PEPPER, SVC_BILLING: 'stripe', STRIPE_SECRET_KEY: SK, STRIPE_WEBHOOK_SECRET: SECRET, SVC_STRIPE_API_URL: fake.url });
}, 60_000);
afterAll(async () => {
  await svc?.stop();
  await fake?.close();
});

describe('Stripe top-ups', () => {
  it('has no portal before a paid checkout, and lets admins and owners (not members) start one, for a pack amount', async () => {
    expect((await svc.api('/api/billing/portal', { method: 'POST' })).status).toBe(409);
    const member = await keyOf('member');
    const refused = await svc.api('/api/billing/checkout', { method: 'POST', key: member, json: { cents: 1000 } });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({ error: 'starting a checkout needs role admin or owner' });
    const admin = await keyOf('admin');
    expect((await svc.api('/api/billing/checkout', { method: 'POST', key: admin, json: { cents: 1234 } })).status).toBe(400); // past the role check
    const odd = await svc.api('/api/billing/checkout', { method: 'POST', json: { cents: 1234 } });
    expect(odd.status).toBe(400);
    expect(await odd.json()).toEqual({ error: 'cents: must match a pack (1000, 2500, 5000, 10000)' });
    expect((await svc.api('/api/billing/checkout', { method: 'POST', json: { cents: '1000' } })).status).toBe(400);
    expect(fake.requests).toEqual([]);
    // an admin's checkout goes to Stripe
    const made = await svc.api('/api/billing/checkout', { method: 'POST', key: admin, json: { cents: 1000 } });
    expect(made.status).toBe(200);
    expect(fake.requests.at(-1)).toMatchObject({ method: 'POST', path: '/v1/checkout/sessions' });
  });

  it("reports the packs, and the plan and its machine time from the customer's Stripe subscription once there is one", async () => {
    const wallet = async () => (await (await svc.api('/api/billing/wallet')).json()) as Record<string, any>;
    // no paid checkout yet: no Stripe customer, so no plan, and nothing asked of Stripe
    const asked = fake.requests.length;
    expect(await wallet()).toMatchObject({ plan: null, machineTime: { includedSeconds: null }, packs: [{ cents: 1000, usd: 10 }, { cents: 2500, usd: 25 }, { cents: 5000, usd: 50 }, { cents: 10000, usd: 100 }] });
    expect(fake.requests.length).toBe(asked);

    const { id } = (await (await svc.api('/api/billing/checkout', { method: 'POST', json: { cents: 1000 } })).json()) as { id: string };
    const paid = fake.pay(id);
    expect((await webhook(paid, sign(paid))).status).toBe(200);
    const customer = fake.sessions.get(id)!.customer as string;
    const start = Date.UTC(2030, 0, 1) / 1000;
    const end = Date.UTC(2030, 1, 1) / 1000;
    const item = (product: Record<string, unknown>, metadata: Record<string, string> = {}) => ({
      object: 'subscription_item',
      current_period_start: start,
      current_period_end: end,
      price: { id: 'price_test_team', object: 'price', nickname: null, metadata, product: { id: 'prod_test_team', object: 'product', metadata: {}, ...product } },
    });
    fake.subscriptions.push(
      { id: 'sub_test_old', object: 'subscription', customer, status: 'canceled', created: 1, items: { object: 'list', data: [item({ name: 'Starter' })] } },
      { id: 'sub_test_team', object: 'subscription', customer, status: 'active', created: 2, items: { object: 'list', data: [item({ name: 'Team' }, { svc_machine_seconds: '36000' })] } },
    );
    expect(await wallet()).toMatchObject({
      plan: { id: 'sub_test_team', name: 'Team', status: 'active', periodStart: '2030-01-01T00:00:00.000Z', renewsAt: '2030-02-01T00:00:00.000Z', machineSecondsIncluded: 36000 },
      // machine time is counted over the plan's period
      machineTime: { periodStart: '2030-01-01T00:00:00.000Z', periodEnd: '2030-02-01T00:00:00.000Z', usedSeconds: 0, includedSeconds: 36000 },
    });
    expect(fake.requests.at(-1)).toMatchObject({ method: 'GET', path: '/v1/subscriptions' });
  });

  it('creates a Checkout Session through Stripe, credits it once when the signed webhook arrives, and ignores replays', async () => {
    const res = await svc.api('/api/billing/checkout', { method: 'POST', json: { cents: 2500 } });
    expect(res.status).toBe(200);
    const checkout = (await res.json()) as { id: string; url: string; status: string; cents: number };
    expect(checkout).toMatchObject({ cents: 2500, usd: 25, status: 'open', credited: false, url: `${fake.url}/c/pay/${checkout.id}` });
    expect(fake.requests.at(-1)).toMatchObject({
      method: 'POST',
      path: '/v1/checkout/sessions',
      authorization: `Bearer ${SK}`,
      form: expect.objectContaining({ mode: 'payment', 'line_items[0][price_data][unit_amount]': '2500', 'line_items[0][price_data][currency]': 'usd', client_reference_id: 'default', 'metadata[tenantId]': 'default' }),
    });
    expect(await (await svc.api(`/api/billing/checkouts/${checkout.id}`)).json()).toMatchObject({ id: checkout.id, status: 'open', credited: false });
    expect((await svc.api('/api/billing/checkouts/cs_test_nothing')).status).toBe(404);

    const before = await balance();
    const payload = fake.pay(checkout.id);
    const signature = sign(payload);
    const delivered = await webhook(payload, signature);
    expect(delivered.status).toBe(200);
    expect(await delivered.json()).toEqual({ received: true, credited: true });
    expect(await balance()).toBe(before + 25_000_000);
    expect(await (await svc.api(`/api/billing/checkouts/${checkout.id}`)).json()).toMatchObject({ status: 'complete', credited: true });

    // the same delivery again (Stripe retries), and another event reporting the same paid checkout
    const replay = await webhook(payload, signature);
    expect(replay.status).toBe(200);
    expect(await replay.json()).toEqual({ received: true, credited: false });
    const again = JSON.stringify({ ...JSON.parse(payload), id: 'evt_test_another_delivery' });
    expect(await (await webhook(again, sign(again))).json()).toEqual({ received: true, credited: false });
    expect(await balance()).toBe(before + 25_000_000);

    // the customer of the paid checkout opens the portal (admin or higher)
    const portal = await svc.api('/api/billing/portal', { method: 'POST', key: await keyOf('admin') });
    expect(portal.status).toBe(200);
    expect((await portal.json()).url).toMatch(new RegExp(`^${fake.url}/p/session/bps_test_`));
    expect(fake.requests.at(-1)).toMatchObject({ path: '/v1/billing_portal/sessions', form: expect.objectContaining({ customer: fake.sessions.get(checkout.id)!.customer }) });
  });

  it('answers a forged or tampered webhook with 400 and changes nothing', async () => {
    const res = await svc.api('/api/billing/checkout', { method: 'POST', json: { cents: 1000 } });
    const { id } = (await res.json()) as { id: string };
    const before = await balance();
    const known = await events();
    const payload = fake.pay(id);

    const forged = await webhook(payload, sign(payload, 'whsec_notthesecretnotthesecret'));
    expect(forged.status).toBe(400);
    expect(await forged.json()).toEqual({ error: 'stripe-signature: the signature does not match the payload' });
    const tampered = payload.replace('"amount_total":1000', '"amount_total":100000');
    expect((await webhook(tampered, sign(payload))).status).toBe(400);
    expect((await fetch(`${svc.url}/api/stripe/webhook`, { method: 'POST', body: payload })).status).toBe(400);

    expect(await balance()).toBe(before);
    expect(await events()).toEqual(known);
    expect(await (await svc.api(`/api/billing/checkouts/${id}`)).json()).toMatchObject({ credited: false });
    // the genuine delivery still credits it
    expect(await (await webhook(payload, sign(payload))).json()).toEqual({ received: true, credited: true });
    expect(await balance()).toBe(before + 10_000_000);
  });
});

describe('svc billing checkout', () => {
  it('prints the checkout URL of a pack, and refuses an amount that is not one', async () => {
    const env = { SVC_CONFIG_DIR: tempDir(), SVC_API_URL: svc.url, SVC_API_KEY: svc.key!, BROWSER: 'none' };
    const json = await cli(['billing', 'checkout', '50', '--json'], env);
    expect(json.code, json.stderr).toBe(0);
    const made = json.json();
    expect(made).toEqual({ id: expect.stringMatching(/^cs_test_/), url: `${fake.url}/c/pay/${made.id}`, cents: 5000, usd: 50, status: 'open' });
    const plain = await cli(['billing', 'checkout', '$10'], env);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toMatch(new RegExp(`^url: +${fake.url}/c/pay/cs_test_\\w+$`, 'm'));
    const odd = await cli(['billing', 'checkout', '12'], env);
    expect(odd.code).toBe(1);
    expect(odd.stderr).toContain('cents: must match a pack');
    const bad = await cli(['billing', 'checkout', 'lots'], env);
    expect(bad.code).toBe(2);
  });
});


describe('stripe mode without keys (dev)', () => {
  it('boots, and answers the wallet, checkout and the webhook with 503: no billing client', async () => {
    const bare = await startTestSvc({ DATABASE_URL: 'memory', SVC_BILLING: 'stripe' });
    try {
      const wallet = await bare.api('/api/billing/wallet');
      expect(wallet.status).toBe(503);
      expect(await wallet.json()).toEqual({ error: 'no billing client: set STRIPE_SECRET_KEY' });
      const res = await bare.api('/api/billing/checkout', { method: 'POST', json: { cents: 1000 } });
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ error: 'no billing client: set STRIPE_SECRET_KEY' });
      expect((await fetch(`${bare.url}/api/stripe/webhook`, { method: 'POST', headers: { 'stripe-signature': 't=1,v1=00' }, body: '{}' })).status).toBe(503);
    } finally {
      await bare.stop();
    }
  }, 60_000);
});
