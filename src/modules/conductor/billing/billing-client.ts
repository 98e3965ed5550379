import type { BillingConfig } from '../../../config/billing.config.ts';
import { AppError } from '../../../shared/errors.ts';

/**
 * What stands behind the wallet and checkout (seed 000, "Billing"): Stripe with the credit ledger (`stripe` with its
 * secret key), the ledger alone (`ledger`: credit the operator grants), or nothing (`off`, or `stripe` without a key,
 * which only dev allows). Without one, the wallet and checkout answer 503 `no billing client…`; a checkout needs
 * Stripe. Outside dev a conductor does not start without one unless SVC_BILLING=off says so (config/billing.config.ts).
 */
export type BillingClientKind = 'stripe' | 'ledger';

export function billingClientOf(billing: BillingConfig): BillingClientKind | undefined {
  if (billing.mode === 'stripe') return billing.stripe.secretKey ? 'stripe' : undefined;
  return billing.mode === 'ledger' ? 'ledger' : undefined;
}

/** The 503 of a wallet or checkout that has no billing client to ask (`what` says what it would have done). */
export function noBillingClient(billing: BillingConfig, what: 'wallet' | 'checkout'): AppError {
  if (billing.mode === 'stripe') return new AppError(503, 'no billing client: set STRIPE_SECRET_KEY');
  if (what === 'checkout' && billing.mode === 'ledger') {
    return new AppError(503, 'no billing client: checkout needs SVC_BILLING=stripe (this server bills from a ledger the operator grants credit to)');
  }
  return new AppError(503, 'no billing client: this server runs without billing (SVC_BILLING=off)');
}
