import * as v from 'valibot';
import type { Agrees, Same } from '../schema-check.ts';
import type { SpendCap } from '../../../contracts/billing.ts';
import type { Wallet } from './wallet.service.ts';
import type { CheckoutView as Checkout } from './stripe.service.ts';

/** What the billing routes answer (wallet.service.ts `Wallet`, contracts/billing.ts `SpendCap`, stripe.service.ts `CheckoutView`). */
const Instant = v.string();

export const PlanView = v.object({
  id: v.string(),
  name: v.string(),
  status: v.string(),
  periodStart: v.nullable(Instant),
  renewsAt: v.nullable(Instant),
  machineSecondsIncluded: v.nullable(v.number()),
});

export const WalletView = v.object({
  configured: v.boolean(),
  balanceMicroUSD: v.number(),
  balanceUSD: v.number(),
  plan: v.nullable(PlanView),
  machineTime: v.object({ periodStart: Instant, periodEnd: Instant, usedSeconds: v.number(), includedSeconds: v.nullable(v.number()) }),
  packs: v.array(v.object({ cents: v.number(), usd: v.number() })),
});

export const GrantAnswer = v.object({ id: v.string(), tenantId: v.string(), wallet: WalletView });

const CapWindow = v.object({
  limit_usd_cents: v.nullable(v.number()),
  limit_usd: v.nullable(v.number()),
  spent_usd_cents: v.number(),
  spent_usd: v.number(),
  remaining_usd_cents: v.nullable(v.number()),
  user_set: v.boolean(),
  resets_at: Instant,
});

export const SpendCapView = v.object({ enabled: v.boolean(), month: CapWindow, day: CapWindow, billing_email: v.nullable(v.string()) });

export const CheckoutView = v.object({
  id: v.string(),
  cents: v.number(),
  usd: v.number(),
  status: v.picklist(['open', 'complete', 'expired']),
  credited: v.boolean(),
  url: v.nullable(v.string()),
  createdAt: Instant,
});

export const PortalView = v.object({ url: v.string() });

export const StripeWebhookAnswer = v.object({ received: v.literal(true), credited: v.boolean() });

/** The schemas above say what the code answers (schema-check.ts). */
export type BillingAnswersChecked = [
  Agrees<Same<v.InferOutput<typeof WalletView>, Wallet>>,
  Agrees<Same<v.InferOutput<typeof SpendCapView>, SpendCap>>,
  Agrees<Same<v.InferOutput<typeof CheckoutView>, Checkout>>,
];
