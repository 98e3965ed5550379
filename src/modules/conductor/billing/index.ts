/** Billing: the credit wallet (a ledger in the database), spend caps, the credit gate, per-run charging, Stripe top-ups. */
export { billingFeature } from './billing.feature.ts';
export { chargeCredit, grantCredit, getWallet, type Wallet } from './wallet.service.ts';
export { getSpendCap, type SpendCap, type CapDefaults } from './spend-cap.service.ts';
export { priceTokens, ratesOf, type Priced, type RunTokens } from './model-prices.ts';
