import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { withTenant } from '../../../db/index.ts';
import { badRequest } from '../../../shared/errors.ts';
import type { Tx } from '../../../db/index.ts';
import { insertEntry, ledgerTotals, lockTenantLedger, runSecondsBetween } from './ledger.repo.ts';
import type { Plan } from './stripe-plan.ts';

/**
 * The credit wallet: a ledger of grants and charges in micro-USD whose sum is the balance. A tenant that was never
 * granted credit is `configured: false`. Beside it, what the billing provider says of the tenant's plan, and the
 * machine time used in the plan's period (else the UTC calendar month). Packs are what a checkout may sell: listed
 * only where one can (Stripe).
 */
export const CREDIT_PACKS_CENTS = [1_000, 2_500, 5_000, 10_000] as const;
export const MICRO_PER_CENT = 10_000;

export interface Wallet {
  configured: boolean;
  balanceMicroUSD: number;
  balanceUSD: number;
  plan: Plan | null;
  machineTime: MachineTime;
  packs: Array<{ cents: number; usd: number }>;
}

export interface MachineTime {
  periodStart: string;
  periodEnd: string;
  usedSeconds: number;
  /** What the plan includes per period (the provider's word); null without a plan that says. */
  includedSeconds: number | null;
}

/** `account`: what the billing provider adds (its plan; whether packs can be bought here). */
export async function getWallet(db: Kysely<DB>, tenantId: string, account: { plan: Plan | null; sellsPacks: boolean } = { plan: null, sellsPacks: false }, now = new Date()): Promise<Wallet> {
  const { plan } = account;
  const from = plan?.periodStart && plan.renewsAt ? new Date(plan.periodStart) : new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const to = plan?.periodStart && plan.renewsAt ? new Date(plan.renewsAt) : new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  const [totals, used] = await withTenant(db, tenantId, async (tx) => [await ledgerTotals(tx), await runSecondsBetween(tx, from, to)] as const);
  return {
    configured: totals.grants > 0,
    balanceMicroUSD: totals.balanceMicroUsd,
    balanceUSD: totals.balanceMicroUsd / 1_000_000,
    plan,
    machineTime: { periodStart: from.toISOString(), periodEnd: to.toISOString(), usedSeconds: Math.round(used * 1000) / 1000, includedSeconds: plan?.machineSecondsIncluded ?? null },
    packs: account.sellsPacks ? CREDIT_PACKS_CENTS.map((cents) => ({ cents, usd: cents / 100 })) : [],
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
