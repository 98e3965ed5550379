import { ConfigError } from './parse.ts';

/**
 * SVC_BILLING picks how runs are paid for:
 * - `off`: no billing client: no credit gate, and the wallet and checkout answer 503 `no billing client…`; usage is
 *   still metered and priced (`/api/usage`, metrics). The default in dev; outside dev a conductor must be told so
 *   (seed 000: it "refuses to start without a valid billing client"), so running unbilled is the operator's choice;
 * - `ledger`: prepaid credit in our ledger, granted by the operator; runs on the operator's keys need credit and
 *   stay under the spend caps, and each run's priced usage is charged once when it ends;
 * - `stripe`: the ledger, topped up through Stripe Checkout (STRIPE_SECRET_KEY, STRIPE_WEBHOOK_SECRET; the API base
 *   SVC_STRIPE_API_URL is for tests and proxies).
 */
export const BILLING_MODES = ['off', 'ledger', 'stripe'] as const;
export type BillingMode = (typeof BILLING_MODES)[number];

export interface BillingConfig {
  mode: BillingMode;
  stripe: {
    secretKey: string | undefined;
    webhookSecret: string | undefined;
    /** Where the official client sends its calls (default Stripe's own API). */
    apiUrl: string | undefined;
    /** Where a finished or abandoned checkout returns the buyer (SVC_BILLING_RETURN_URL, default the server's own URL). */
    returnUrl: string | undefined;
  };
  /**
   * SVC_LOW_CREDIT_MICRO_USD: a charge that takes a tenant's balance below this notifies it (`credit.low`); default
   * 1,000,000 ($1); 0: never.
   */
  lowCreditMicroUsd: number;
}

export function billingConfig(env: Record<string, string | undefined>, appEnv: string, runsBilling: boolean): BillingConfig {
  if (!env.SVC_BILLING && runsBilling && appEnv !== 'dev') {
    throw new ConfigError('SVC_BILLING', `required when AGENT_ORC_ENV is "${appEnv}" (not dev): stripe or ledger for a billing client, or off to run without billing`);
  }
  const raw = env.SVC_BILLING || 'off';
  if (!(BILLING_MODES as readonly string[]).includes(raw)) throw new ConfigError('SVC_BILLING', `got "${raw}"; allowed: ${BILLING_MODES.join(', ')}`);
  const mode = raw as BillingMode;
  const secretKey = env.STRIPE_SECRET_KEY || undefined;
  const webhookSecret = env.STRIPE_WEBHOOK_SECRET || undefined;
  if (secretKey !== undefined && !/^(sk|rk)_(test|live)_[A-Za-z0-9]{8,}$/.test(secretKey)) throw new ConfigError('STRIPE_SECRET_KEY', 'a Stripe secret key (sk_live_… or sk_test_…)');
  if (webhookSecret !== undefined && !/^whsec_[A-Za-z0-9+/=]{8,}$/.test(webhookSecret)) throw new ConfigError('STRIPE_WEBHOOK_SECRET', 'a Stripe webhook signing secret (whsec_…)');
  if (mode === 'stripe' && runsBilling && appEnv !== 'dev') {
    if (!secretKey) throw new ConfigError('STRIPE_SECRET_KEY', `required when SVC_BILLING is stripe and AGENT_ORC_ENV is "${appEnv}" (not dev)`);
    if (!webhookSecret) throw new ConfigError('STRIPE_WEBHOOK_SECRET', `required when SVC_BILLING is stripe and AGENT_ORC_ENV is "${appEnv}" (not dev)`);
  }
  const rawLow = env.SVC_LOW_CREDIT_MICRO_USD || '1000000';
  const lowCreditMicroUsd = Number(rawLow);
  if (!/^\d+$/.test(rawLow) || !Number.isSafeInteger(lowCreditMicroUsd)) throw new ConfigError('SVC_LOW_CREDIT_MICRO_USD', `got "${rawLow}"; allowed: a whole number of micro-USD (0: never notify)`);
  return { mode, lowCreditMicroUsd, stripe: { secretKey, webhookSecret, apiUrl: httpUrl('SVC_STRIPE_API_URL', env.SVC_STRIPE_API_URL), returnUrl: httpUrl('SVC_BILLING_RETURN_URL', env.SVC_BILLING_RETURN_URL) } };
}

function httpUrl(name: string, raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new ConfigError(name, `got "${raw}"; allowed: an http(s) URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new ConfigError(name, `got "${raw}"; allowed: an http(s) URL`);
  return raw.replace(/\/+$/, '');
}
