import { doc } from '../../../shared/route-doc.ts';
import { Hono } from 'hono';
import * as v from 'valibot';
import { readJson } from '../../../shared/http.ts';
import type { Guards, IdentityEnv } from '../identity/index.ts';
import type { StripeBilling } from './stripe.service.ts';

const CheckoutBody = v.object({ cents: v.pipe(v.number('cents: expected a number'), v.safeInteger('cents: a whole number of cents')) });

/**
 * `POST /api/billing/checkout` (admin+: seed 001 gives checkouts to admins), `GET /api/billing/checkouts/{id}` (member+),
 * `POST /api/billing/portal` (admin+). Without Stripe they answer 503 (billing-client.ts).
 */
export function checkoutRoutes(stripe: StripeBilling, guards: Guards): Hono<IdentityEnv> {
  const role = guards.requireRole<IdentityEnv>;
  return new Hono<IdentityEnv>()
    .post('/billing/checkout', doc({ body: CheckoutBody }), role('admin', 'starting a checkout'), async (c) => {
      const { cents } = await readJson(c, CheckoutBody);
      const p = c.get('principal');
      return c.json(await stripe.checkout(p.tenantId, cents, p.keyId ?? p.subject));
    })
    .get('/billing/checkouts/:id', role('member', 'reading a checkout'), async (c) => c.json(await stripe.getCheckout(c.get('principal').tenantId, c.req.param('id'))))
    .post('/billing/portal', role('admin', 'opening the billing portal'), async (c) => c.json(await stripe.portal(c.get('principal').tenantId)));
}

/** `POST /api/stripe/webhook`: unauthenticated (Stripe signs it); the raw body is what the signature covers. */
export function stripeWebhookRoutes(stripe: StripeBilling): Hono {
  return new Hono().post('/api/stripe/webhook', async (c) => c.json(await stripe.webhook(await c.req.text(), c.req.header('stripe-signature'))));
}
