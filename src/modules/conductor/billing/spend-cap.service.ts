import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { withTenant } from '../../../db/index.ts';
import { getCapRow, spentSince, upsertCapRow } from './ledger.repo.ts';
import { MICRO_PER_CENT } from './wallet.service.ts';
import type { CapWindow, SpendCap } from '../../../contracts/billing.ts';
export type { CapWindow, SpendCap } from '../../../contracts/billing.ts';

/**
 * The spend cap: a monthly window the tenant's admins may set (or revert to the system default) and a daily window
 * only the operator sets. Spend is read from the credit ledger's charges; windows are UTC calendar months and days.
 */
export interface CapDefaults {
  /** 0: no system cap. */
  monthCapCents: number;
  dayCapCents: number;
}


function window(limit: number | null, spentMicro: number, userSet: boolean, resetsAt: Date): CapWindow {
  // Round spend up to the cent, so `remaining` never overstates what is left.
  const spent = Math.ceil(spentMicro / MICRO_PER_CENT);
  return {
    limit_usd_cents: limit,
    limit_usd: limit === null ? null : limit / 100,
    spent_usd_cents: spent,
    spent_usd: spent / 100,
    remaining_usd_cents: limit === null ? null : Math.max(0, limit - spent),
    user_set: userSet,
    resets_at: resetsAt.toISOString(),
  };
}

export async function getSpendCap(db: Kysely<DB>, tenantId: string, defaults: CapDefaults, now = new Date()): Promise<SpendCap> {
  const { monthStart, dayStart } = capWindows(now);
  const { row, month, day } = await withTenant(db, tenantId, async (tx) => ({
    row: await getCapRow(tx),
    month: await spentSince(tx, monthStart),
    day: await spentSince(tx, dayStart),
  }));
  return spendCapOf(row, month, day, defaults, now);
}

/** The cap's windows from the cap row (undefined: none set) and the spend of this month and day (UTC). */
export function spendCapOf(
  row: { monthLimitCents: number | null; billingEmail: string | null } | undefined,
  month: number,
  day: number,
  defaults: CapDefaults,
  now = new Date(),
): SpendCap {
  const nextMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  const dayStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  const nextDay = new Date(dayStart.getTime() + 86_400_000);
  const userSet = row?.monthLimitCents !== undefined && row.monthLimitCents !== null;
  const monthLimit = userSet ? row!.monthLimitCents : defaults.monthCapCents > 0 ? defaults.monthCapCents : null;
  let dayLimit = defaults.dayCapCents > 0 ? defaults.dayCapCents : null;
  if (dayLimit !== null && monthLimit !== null) dayLimit = Math.min(dayLimit, monthLimit);
  return {
    enabled: monthLimit !== null || dayLimit !== null,
    month: window(monthLimit, month, userSet, nextMonth),
    day: window(dayLimit, day, false, nextDay),
    billing_email: row?.billingEmail ?? null,
  };
}

/** The starts of the UTC month and day the cap's windows count from. */
export function capWindows(now = new Date()): { monthStart: Date; dayStart: Date } {
  return { monthStart: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)), dayStart: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate())) };
}

/** Sets the monthly cap; `null` reverts to the system default. `billingEmail` is left as is when undefined. */
export async function setSpendCap(
  db: Kysely<DB>,
  tenantId: string,
  input: { monthLimitCents: number | null; billingEmail?: string | null; updatedBy: string | null },
  defaults: CapDefaults,
): Promise<SpendCap> {
  await withTenant(db, tenantId, (tx) => upsertCapRow(tx, { tenantId, ...input }));
  return getSpendCap(db, tenantId, defaults);
}
