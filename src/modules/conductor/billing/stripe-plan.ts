import type Stripe from 'stripe';

/**
 * A tenant's plan as Stripe holds it: the newest live subscription (active, trialing or past due) of the tenant's
 * Stripe customer, named by its product (else its price's nickname, else the price id). The machine time the plan
 * includes is the `svc_machine_seconds` metadata of the price, else of the product (a whole number of seconds), which
 * the operator sets in Stripe beside the plan's price.
 */
export interface Plan {
  id: string;
  name: string;
  status: string;
  /** The current period (ISO 8601), if Stripe says: it ends when the plan renews. */
  periodStart: string | null;
  renewsAt: string | null;
  /** Machine time the plan includes per period, in seconds; null when the plan does not say. */
  machineSecondsIncluded: number | null;
}

const LIVE = new Set(['active', 'trialing', 'past_due']);
export const MACHINE_SECONDS_KEY = 'svc_machine_seconds';

export async function planOf(stripe: Stripe, customer: string): Promise<Plan | null> {
  const subs = await stripe.subscriptions.list({ customer, status: 'all', limit: 10, expand: ['data.items.data.price.product'] });
  const sub = subs.data.filter((s) => LIVE.has(s.status)).sort((a, b) => b.created - a.created)[0];
  const item = sub?.items.data[0];
  if (!sub || !item) return null;
  const price = item.price;
  const product = typeof price.product === 'object' && !('deleted' in price.product && price.product.deleted) ? (price.product as Stripe.Product) : undefined;
  return {
    id: sub.id,
    name: product?.name ?? price.nickname ?? price.id,
    status: sub.status,
    periodStart: item.current_period_start ? new Date(item.current_period_start * 1000).toISOString() : null,
    renewsAt: item.current_period_end ? new Date(item.current_period_end * 1000).toISOString() : null,
    machineSecondsIncluded: seconds(price.metadata?.[MACHINE_SECONDS_KEY] ?? product?.metadata?.[MACHINE_SECONDS_KEY]),
  };
}

function seconds(raw: string | undefined): number | null {
  return raw !== undefined && /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : null;
}
