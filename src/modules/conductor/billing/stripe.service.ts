// A type import only: the package (tens of MiB once loaded) is imported on first use, in stripe mode only.
import type Stripe from 'stripe';
import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { withTenant } from '../../../db/index.ts';
import type { BillingConfig } from '../../../config/billing.config.ts';
import { AppError, badRequest, conflict, describeError, notFound, unavailable } from '../../../shared/errors.ts';
import type { Logger } from '../../../shared/log.ts';
import { findCheckout, insertCheckout, latestCustomer, markCredited, recordEvent, setCheckoutStatus, type CheckoutRow } from './checkouts.repo.ts';
import { insertEntry } from './ledger.repo.ts';
import { CREDIT_PACKS_CENTS, MICRO_PER_CENT } from './wallet.service.ts';
import { noBillingClient } from './billing-client.ts';
import { planOf, type Plan } from './stripe-plan.ts';

/**
 * Top-ups through Stripe, with the official `stripe` package: Checkout Sessions for the credit packs, the customer
 * portal, and the webhook that credits a paid checkout. The webhook's signature is verified by the package's own
 * `webhooks.constructEvent`; each event id is handled once and each checkout credited once, in one transaction with
 * the ledger grant, so a replayed or duplicated event never grants twice.
 */
export interface StripeBilling {
  checkout(tenantId: string, cents: number, createdBy: string | null): Promise<CheckoutView>;
  getCheckout(tenantId: string, id: string): Promise<CheckoutView>;
  portal(tenantId: string): Promise<{ url: string }>;
  /** The tenant's plan (stripe-plan.ts); null before its first checkout or without a live subscription. */
  plan(tenantId: string): Promise<Plan | null>;
  /** Verifies and applies a webhook delivery; throws 400 for a bad signature. */
  webhook(payload: string, signature: string | undefined): Promise<{ received: true; credited: boolean }>;
}

export interface CheckoutView {
  id: string;
  cents: number;
  usd: number;
  status: CheckoutRow['status'];
  credited: boolean;
  url: string | null;
  createdAt: string;
}

const view = (r: CheckoutRow): CheckoutView => ({ id: r.id, cents: r.cents, usd: r.cents / 100, status: r.status, credited: r.creditedAt !== null, url: r.url, createdAt: r.createdAt });

/** The official client, pointed at SVC_STRIPE_API_URL when set (tests, proxies). */
export async function stripeClient(cfg: BillingConfig['stripe']): Promise<Stripe | undefined> {
  if (!cfg.secretKey) return undefined;
  const { default: Stripe } = await import('stripe');
  const base = cfg.apiUrl ? new URL(cfg.apiUrl) : undefined;
  const where = base ? { host: base.hostname, port: base.port || (base.protocol === 'http:' ? 80 : 443), protocol: base.protocol === 'http:' ? ('http' as const) : ('https' as const) } : {};
  return new Stripe(cfg.secretKey, { maxNetworkRetries: 2, timeout: 20_000, ...where });
}

export function createStripeBilling(deps: { db: Kysely<DB>; billing: BillingConfig; selfUrl: string; log: Logger }): StripeBilling {
  const cfg = deps.billing.stripe;
  let loading: Promise<Stripe | undefined> | undefined;
  const stripeOf = () => (loading ??= deps.billing.mode === 'stripe' ? stripeClient(cfg) : Promise.resolve(undefined));
  const returnUrl = cfg.returnUrl ?? deps.selfUrl;
  // Without Stripe (SVC_BILLING off or ledger, or stripe without keys, which dev allows) there is no billing client
  // to check out with: 503, as the seed says.
  const client = async (): Promise<Stripe> => {
    const stripe = await stripeOf();
    if (!stripe) throw noBillingClient(deps.billing, 'checkout');
    return stripe;
  };
  const upstream = (what: string) => (err: unknown): never => {
    deps.log.warn('stripe call failed', { what, error: describeError(err) });
    throw new AppError(502, `billing provider error: ${what} failed`);
  };

  async function creditPaid(session: Stripe.Checkout.Session, event: Stripe.Event): Promise<boolean> {
    const tenantId = session.metadata?.tenantId ?? session.client_reference_id;
    if (!tenantId) return false;
    const customer = typeof session.customer === 'string' ? session.customer : (session.customer?.id ?? null);
    return withTenant(deps.db, tenantId, async (tx) => {
      if (!(await findCheckout(tx, session.id))) return false; // not one of ours (or another tenant's)
      if (!(await recordEvent(tx, { id: event.id, tenantId, type: event.type }))) return false; // a replay
      if (session.payment_status !== 'paid' && session.payment_status !== 'no_payment_required') return false;
      const cents = await markCredited(tx, session.id, customer);
      if (cents === undefined) return false; // credited by an earlier event
      await insertEntry(tx, { tenantId, kind: 'grant', amountMicroUsd: cents * MICRO_PER_CENT, description: `Stripe checkout ${session.id}`, createdBy: 'stripe' });
      return true;
    });
  }

  return {
    async checkout(tenantId, cents, createdBy) {
      if (!(CREDIT_PACKS_CENTS as readonly number[]).includes(cents)) throw badRequest(`cents: must match a pack (${CREDIT_PACKS_CENTS.join(', ')})`);
      const s = await client();
      const customer = await withTenant(deps.db, tenantId, (tx) => latestCustomer(tx));
      const session = await s.checkout.sessions
        .create({
          mode: 'payment',
          line_items: [{ quantity: 1, price_data: { currency: 'usd', unit_amount: cents, product_data: { name: `svc credit: $${(cents / 100).toFixed(2)}` } } }],
          client_reference_id: tenantId,
          metadata: { tenantId, cents: String(cents) },
          ...(customer ? { customer } : {}),
          success_url: `${returnUrl}/api/billing/checkouts/{CHECKOUT_SESSION_ID}`,
          cancel_url: `${returnUrl}/api/billing/wallet`,
        })
        .catch(upstream('creating a checkout'));
      await withTenant(deps.db, tenantId, (tx) => insertCheckout(tx, { id: session.id, tenantId, cents, url: session.url, createdBy }));
      return { id: session.id, cents, usd: cents / 100, status: 'open', credited: false, url: session.url, createdAt: new Date().toISOString() };
    },

    async getCheckout(tenantId, id) {
      const row = await withTenant(deps.db, tenantId, (tx) => findCheckout(tx, id));
      if (!row) throw notFound(`unknown checkout: ${id}`);
      const stripe = row.status === 'open' ? await stripeOf() : undefined;
      if (!stripe) return view(row);
      // an open checkout may have expired (or been paid before its webhook arrived): ask Stripe
      const live = await stripe.checkout.sessions.retrieve(id).catch(upstream('reading a checkout'));
      if (live.status === 'expired') {
        await withTenant(deps.db, tenantId, (tx) => setCheckoutStatus(tx, id, 'expired'));
        return { ...view(row), status: 'expired' };
      }
      return { ...view(row), status: live.status === 'complete' ? 'complete' : 'open' };
    },

    async portal(tenantId) {
      const s = await client();
      const customer = await withTenant(deps.db, tenantId, (tx) => latestCustomer(tx));
      if (!customer) throw conflict('no billing account yet: complete a checkout first');
      const session = await s.billingPortal.sessions.create({ customer, return_url: `${returnUrl}/api/billing/wallet` }).catch(upstream('opening the billing portal'));
      return { url: session.url };
    },

    async plan(tenantId) {
      const stripe = await stripeOf();
      const customer = stripe && (await withTenant(deps.db, tenantId, (tx) => latestCustomer(tx)));
      return stripe && customer ? planOf(stripe, customer).catch(upstream('reading the plan')) : null;
    },

    async webhook(payload, signature) {
      const s = await client();
      if (!cfg.webhookSecret) throw unavailable('no billing webhook secret: set STRIPE_WEBHOOK_SECRET');
      if (!signature) throw badRequest('stripe-signature: header required');
      let event: Stripe.Event;
      try {
        event = s.webhooks.constructEvent(payload, signature, cfg.webhookSecret);
      } catch (err) {
        deps.log.warn('stripe webhook refused', { error: describeError(err) });
        throw badRequest('stripe-signature: the signature does not match the payload');
      }
      if (event.type === 'checkout.session.completed' || event.type === 'checkout.session.async_payment_succeeded') {
        return { received: true, credited: await creditPaid(event.data.object, event) };
      }
      if (event.type === 'checkout.session.expired') {
        const session = event.data.object;
        const tenantId = session.metadata?.tenantId ?? session.client_reference_id;
        if (tenantId) await withTenant(deps.db, tenantId, (tx) => setCheckoutStatus(tx, session.id, 'expired'));
      }
      return { received: true, credited: false };
    },
  };
}
