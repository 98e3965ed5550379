import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { withTenant } from '../../../db/index.ts';
import { badRequest } from '../../../shared/errors.ts';
import type { Tx } from '../../../db/index.ts';
import { insertEntry, ledgerTotals, lockTenantLedger } from './ledger.repo.ts';

/**
 * The credit wallet: a ledger of grants and charges in micro-USD whose sum is the balance. A tenant that was never
 * granted credit is `configured: false`. Packs are what a checkout may sell (the checkout itself needs a billing
 * provider, which self-hosted svc does not have).
 */
export const CREDIT_PACKS_CENTS = [1_000, 2_500, 5_000, 10_000] as const;
export const MICRO_PER_CENT = 10_000;

export interface Wallet {
  configured: boolean;
  balanceMicroUSD: number;
  balanceUSD: number;
  plan: string | null;
  packs: Array<{ cents: number; usd: number }>;
}

export async function getWallet(db: Kysely<DB>, tenantId: string): Promise<Wallet> {
  const totals = await withTenant(db, tenantId, (tx) => ledgerTotals(tx));
  return {
    configured: totals.grants > 0,
    balanceMicroUSD: totals.balanceMicroUsd,
    balanceUSD: totals.balanceMicroUsd / 1_000_000,
    plan: null,
    packs: CREDIT_PACKS_CENTS.map((cents) => ({ cents, usd: cents / 100 })),
  };
}

/** Adds credit (operator grants, refunds). */
export async function grantCredit(db: Kysely<DB>, g: { tenantId: string; amountMicroUsd: number; description: string; createdBy: string | null }): Promise<{ id: string; wallet: Wallet }> {
  if (!Number.isSafeInteger(g.amountMicroUsd) || g.amountMicroUsd <= 0) throw badRequest('amount: a positive whole number of micro-USD');
  const { id } = await withTenant(db, g.tenantId, (tx) => insertEntry(tx, { tenantId: g.tenantId, kind: 'grant', amountMicroUsd: g.amountMicroUsd, description: g.description, createdBy: g.createdBy }));
  return { id, wallet: await getWallet(db, g.tenantId) };
}

/** What a charge that takes the balance below `thresholdMicroUsd` calls, inside its transaction (credit.low). */
export interface LowCredit {
  thresholdMicroUsd: number;
  crossed(tx: Tx, tenantId: string, balanceMicroUsd: number): Promise<void>;
}

/**
 * Charges usage against the wallet; a charge naming a run is recorded once however often it is retried. With
 * `lowCredit`, the charge that takes the balance from at or above its threshold to below it calls `crossed` (charges
 * of one tenant take a transaction lock then, so two at once cannot both miss, or both see, the crossing).
 */
export async function chargeCredit(db: Kysely<DB>, c: { tenantId: string; amountMicroUsd: number; description: string; runId?: string }, lowCredit?: LowCredit): Promise<boolean> {
  if (!Number.isSafeInteger(c.amountMicroUsd) || c.amountMicroUsd <= 0) throw badRequest('amount: a positive whole number of micro-USD');
  const watch = lowCredit && lowCredit.thresholdMicroUsd > 0 ? lowCredit : undefined;
  const { inserted } = await withTenant(db, c.tenantId, async (tx) => {
    if (watch) await lockTenantLedger(tx, c.tenantId);
    const entry = await insertEntry(tx, { tenantId: c.tenantId, kind: 'charge', amountMicroUsd: -c.amountMicroUsd, description: c.description, runId: c.runId ?? null });
    if (watch && entry.inserted) {
      const after = (await ledgerTotals(tx)).balanceMicroUsd;
      if (after < watch.thresholdMicroUsd && after + c.amountMicroUsd >= watch.thresholdMicroUsd) await watch.crossed(tx, c.tenantId, after);
    }
    return entry;
  });
  return inserted;
}
