import { Hono } from 'hono';
import type { Feature } from '../feature.ts';
import type { IdentityEnv } from '../identity/index.ts';
import { attachBilling, billingGate } from './billing.hooks.ts';
import { billingRoutes } from './billing.routes.ts';
import { checkoutRoutes, stripeWebhookRoutes } from './checkout.routes.ts';
import { createStripeBilling } from './stripe.service.ts';

/**
 * `/api/billing/…` (wallet, grants, checkout, checkouts, portal), `/api/spend-cap`, the public Stripe webhook, the
 * credit gate on every run start and the `billing` runFinished subscriber that prices and charges runs.
 */
export const billingFeature: Feature = ({ db, config, guards, hooks, jobs, metrics, log, selfUrl }) => {
  const stripe = createStripeBilling({ db, billing: config.billing, selfUrl, log: log.child('stripe') });
  // the gate is in place before any route can start a run
  billingGate({ db, hooks, jobs, billing: config.billing, defaults: config.cli, log: log.child('billing') });
  return {
    api: new Hono<IdentityEnv>().route('/', billingRoutes({ db, defaults: config.cli, guards, billing: config.billing, stripe })).route('/', checkoutRoutes(stripe, guards)),
    public: stripeWebhookRoutes(stripe),
    start: () => attachBilling({ db, hooks, jobs, billing: config.billing, metrics, log: log.child('billing') }),
  };
};
