import { doc } from '../../../shared/route-doc.ts';
import { Hono } from 'hono';
import type { Kysely } from 'kysely';
import * as v from 'valibot';
import { readOnlyFields } from '../../../shared/strict-body.ts';
import type { DB } from '../../../db/index.ts';
import { badRequest } from '../../../shared/errors.ts';
import { readJson } from '../../../shared/http.ts';
import type { Guards, IdentityEnv } from '../identity/index.ts';
import { getSpendCap, setSpendCap, type CapDefaults } from './spend-cap.service.ts';
import { getWallet, grantCredit } from './wallet.service.ts';
import type { BillingConfig } from '../../../config/billing.config.ts';
import { billingClientOf, noBillingClient } from './billing-client.ts';
import type { StripeBilling } from './stripe.service.ts';
import { GrantAnswer, SpendCapView, WalletView } from './billing.schema.ts';

/** Largest monthly cap accepted: $10,000,000. */
export const MAX_CAP_CENTS = 1_000_000_000;

/** `day` (and its old spelling) are named so they get their own answer; what else a GET shows is ignored. */
const CapBody = v.object({
  ...readOnlyFields('enabled', 'month'),
  day: v.optional(v.unknown()),
  day_limit_usd_cents: v.optional(v.unknown()),
  limit_usd_cents: v.nullable(v.pipe(v.number(), v.integer('a whole number of cents'), v.minValue(0, 'not negative'), v.maxValue(MAX_CAP_CENTS, `at most ${MAX_CAP_CENTS}`))),
  billing_email: v.optional(v.nullable(v.pipe(v.string(), v.email()))),
});

const GrantBody = v.object({
  tenantId: v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'a tenant slug')),
  amountMicroUSD: v.pipe(v.number(), v.safeInteger(), v.minValue(1)),
  description: v.optional(v.pipe(v.string(), v.maxLength(500)), 'operator grant'),
});

/**
 * `/api/billing/wallet` (member+; 503 without a billing client), `/api/spend-cap` (GET member+, PUT admin+) and the
 * operator's `POST /api/billing/grants` (operator tenant only, 404 to everyone else, like the tenant routes).
 */
export function billingRoutes(deps: { db: Kysely<DB>; defaults: CapDefaults; guards: Guards; billing: BillingConfig; stripe: StripeBilling }): Hono<IdentityEnv> {
  const { db, defaults, guards } = deps;
  const role = guards.requireRole<IdentityEnv>;
  const client = billingClientOf(deps.billing);
  return new Hono<IdentityEnv>()
    .get('/billing/wallet', doc({ summary: 'Read the credit wallet', description: 'The tenant\'s credit balance, its plan (with Stripe), the machine time used this period and the credit packs a checkout can sell. Members and up; 503 when the server runs without billing.', response: WalletView, errors: [403, 503] }), role('member', 'the wallet'), async (c) => {
      if (!client) throw noBillingClient(deps.billing, 'wallet');
      const tenantId = c.get('principal').tenantId;
      const plan = client === 'stripe' ? await deps.stripe.plan(tenantId) : null;
      return c.json(await getWallet(db, tenantId, { plan, sellsPacks: client === 'stripe' }));
    })
    .post('/billing/grants', doc({ summary: 'Grant credit to a tenant', description: 'Adds credit (micro-USD) to a tenant\'s wallet. Only an admin of the operator\'s tenant may; to every other caller the route does not exist (404).', body: GrantBody, response: GrantAnswer, status: 201, errors: [403, 404] }), guards.operatorOnly(), role('admin', 'granting credit'), async (c) => {
      const p = c.get('principal');
      const body = await readJson(c, GrantBody);
      const { id, wallet } = await grantCredit(db, { tenantId: body.tenantId, amountMicroUsd: body.amountMicroUSD, description: body.description, createdBy: p.keyId ?? p.subject });
      return c.json({ id, tenantId: body.tenantId, wallet }, 201);
    })
    .get('/spend-cap', doc({ summary: 'Read the spend cap', description: 'The monthly and daily spend windows: limit, spent, remaining and when each resets. The monthly limit is the tenant\'s when set, else the system default; the daily one only the operator sets. Members and up.', response: SpendCapView, errors: [403] }), role('member', 'reading the spend cap'), async (c) => c.json(await getSpendCap(db, c.get('principal').tenantId, defaults)))
    .put('/spend-cap', doc({ summary: 'Set the spend cap', description: 'Sets the monthly limit in cents (`null` reverts to the system default) and the billing email. The daily window cannot be set here. Admins and up.', body: CapBody, response: SpendCapView, errors: [403] }), role('admin', 'setting the spend cap'), async (c) => {
      const body = await readJson(c, CapBody);
      if ('day' in body || 'day_limit_usd_cents' in body) throw badRequest('day: the daily window cannot be set; it follows the system default');
      const p = c.get('principal');
      return c.json(await setSpendCap(db, p.tenantId, { monthLimitCents: body.limit_usd_cents, billingEmail: body.billing_email, updatedBy: p.keyId ?? p.subject }, defaults));
    });
}
