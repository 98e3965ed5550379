import { doc } from '../../../shared/route-doc.ts';
import { Hono } from 'hono';
import * as v from 'valibot';
import { readJson } from '../../../shared/http.ts';
import type { Guards, IdentityEnv } from '../identity/index.ts';
import type { StripeBilling } from './stripe.service.ts';
import { CheckoutView, PortalView, StripeWebhookAnswer } from './billing.schema.ts';

const CheckoutBody = v.object({ cents: v.pipe(v.number('cents: expected a number'), v.safeInteger('cents: a whole number of cents')) });

/**
 * `POST /api/billing/checkout` (admin+: seed 001 gives checkouts to admins), `GET /api/billing/checkouts/{id}` (member+),
 * `POST /api/billing/portal` (admin+). Without Stripe they answer 503 (billing-client.ts).
 */
export function checkoutRoutes(stripe: StripeBilling, guards: Guards): Hono<IdentityEnv> {
  const role = guards.requireRole<IdentityEnv>;
  return new Hono<IdentityEnv>()
    .post('/billing/checkout', doc({ summary: 'Start a credit checkout', description: 'Opens a Stripe Checkout for one credit pack (`cents` must match a pack the wallet lists); pay at `url`, and the credit arrives when Stripe confirms the payment. Admins and up; 503 without Stripe.', body: CheckoutBody, response: CheckoutView, errors: [403, 502, 503] }), role('admin', 'starting a checkout'), async (c) => {
      const { cents } = await readJson(c, CheckoutBody);
      const p = c.get('principal');
      return c.json(await stripe.checkout(p.tenantId, cents, p.keyId ?? p.subject));
    })
    .get('/billing/checkouts/:id', doc({ summary: 'Get a checkout', description: 'A checkout\'s status and whether its credit has arrived; an open one is checked with Stripe. Members and up.', response: CheckoutView, errors: [403, 502] }), role('member', 'reading a checkout'), async (c) => c.json(await stripe.getCheckout(c.get('principal').tenantId, c.req.param('id'))))
    .post('/billing/portal', doc({ summary: 'Open the billing portal', description: 'A Stripe customer portal link for the tenant\'s billing account; 409 before the first checkout. Admins and up; 503 without Stripe.', response: PortalView, errors: [403, 409, 502, 503] }), role('admin', 'opening the billing portal'), async (c) => c.json(await stripe.portal(c.get('principal').tenantId)));
}

/** `POST /api/stripe/webhook`: unauthenticated (Stripe signs it); the raw body is what the signature covers. */
export function stripeWebhookRoutes(stripe: StripeBilling): Hono {
  return new Hono().post('/api/stripe/webhook', doc({ public: true, summary: 'Receive a Stripe event', description: 'Stripe\'s webhook: no API key, the `Stripe-Signature` header over the raw body instead. A paid checkout is credited once, however often its event arrives. 503 without a webhook secret.', response: StripeWebhookAnswer, errors: [503] }), async (c) => c.json(await stripe.webhook(await c.req.text(), c.req.header('stripe-signature'))));
}
