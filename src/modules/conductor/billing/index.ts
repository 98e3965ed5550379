/** Billing: the credit wallet (a ledger in the database), the spend cap, the credit gate and per-run charging. */
export { billingRoutes } from './billing.routes.ts';
export { attachBilling } from './billing.hooks.ts';
export { chargeCredit, grantCredit, getWallet, type Wallet } from './wallet.service.ts';
export { getSpendCap, type SpendCap, type CapDefaults } from './spend-cap.service.ts';
export { priceTokens, ratesOf, type Priced, type RunTokens } from './model-prices.ts';
export { checkoutRoutes, stripeWebhookRoutes } from './checkout.routes.ts';
export { createStripeBilling, type StripeBilling } from './stripe.service.ts';
