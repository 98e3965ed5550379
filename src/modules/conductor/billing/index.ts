/** Billing as the CLI reads it: the credit wallet (a ledger in the database) and the monthly spend cap. */
export { billingFeature } from './billing.feature.ts';
export { chargeCredit, grantCredit, getWallet, type Wallet } from './wallet.service.ts';
export { getSpendCap, type SpendCap, type CapDefaults } from './spend-cap.service.ts';
