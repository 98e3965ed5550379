import { sql } from 'kysely';
import type { Tx } from '../../../db/index.ts';
import { prefixedId } from '../../../shared/ids.ts';

/** SQL for the credit ledger (micro-USD, signed) and the spend-cap row. bigint sums travel as text. */
export type LedgerKind = 'grant' | 'charge' | 'refund';

export async function ledgerTotals(tx: Tx): Promise<{ balanceMicroUsd: number; grants: number }> {
  const { rows } = await sql<{ balance: string; grants: number }>`
    select coalesce(sum(amount_micro_usd), 0)::text as balance, (count(*) filter (where kind = 'grant'))::int as grants
    from credit_ledger`.execute(tx);
  return { balanceMicroUsd: Number(rows[0].balance), grants: Number(rows[0].grants) };
}

/** What the credit gate reads (gate.ts), in one statement: the balance, the spend of this month and day, the cap row. */
export interface GateFigures {
  balanceMicroUsd: number;
  monthSpentMicroUsd: number;
  daySpentMicroUsd: number;
  cap: { monthLimitCents: number | null; billingEmail: string | null } | undefined;
}

export type GateFiguresRow = { balance: string; month: string; day: string; capped: boolean; month_limit_cents: string | number | null; billing_email: string | null };

/** ledgerTotals' balance, spentSince of `monthStart` and `dayStart`, and getCapRow, as one statement (tenant scope). */
export function gateFiguresQuery(monthStart: Date, dayStart: Date) {
  const spent = (since: Date) => sql`coalesce(-sum(amount_micro_usd) filter (where kind in ('charge', 'refund') and created_at >= ${since}), 0)::text`;
  return sql<GateFiguresRow>`
    select coalesce(sum(amount_micro_usd), 0)::text as balance, ${spent(monthStart)} as month, ${spent(dayStart)} as day,
           exists (select 1 from spend_caps) as capped, (select month_limit_cents from spend_caps) as month_limit_cents,
           (select billing_email from spend_caps) as billing_email
      from credit_ledger`;
}

export function toGateFigures(row: GateFiguresRow): GateFigures {
  return {
    balanceMicroUsd: Number(row.balance),
    monthSpentMicroUsd: Math.max(0, Number(row.month)),
    daySpentMicroUsd: Math.max(0, Number(row.day)),
    cap: row.capped ? { monthLimitCents: row.month_limit_cents === null ? null : Number(row.month_limit_cents), billingEmail: row.billing_email } : undefined,
  };
}

/** Net spend (charges less refunds) since `since`, in micro-USD; never negative. */
export async function spentSince(tx: Tx, since: Date): Promise<number> {
  const { rows } = await sql<{ spent: string }>`
    select coalesce(-sum(amount_micro_usd), 0)::text as spent
    from credit_ledger where kind in ('charge', 'refund') and created_at >= ${since}`.execute(tx);
  return Math.max(0, Number(rows[0].spent));
}

export async function insertEntry(
  tx: Tx,
  e: { tenantId: string; kind: LedgerKind; amountMicroUsd: number; description: string; runId?: string | null; createdBy?: string | null },
): Promise<{ id: string; inserted: boolean }> {
  const id = prefixedId('cred');
  const row = await tx
    .insertInto('credit_ledger')
    .values({
      id,
      tenant_id: e.tenantId,
      kind: e.kind,
      amount_micro_usd: e.amountMicroUsd,
      description: e.description,
      run_id: e.runId ?? null,
      created_by: e.createdBy ?? null,
    })
    // the partial index's predicate spelled as literals: with a bound parameter, a prepared statement's generic plan
    // (from its sixth execution on a connection) cannot infer the index and the insert fails
    .onConflict((oc) => oc.columns(['tenant_id', 'run_id']).where(sql<boolean>`kind = 'charge' and run_id is not null`).doNothing())
    .returning('id')
    .executeTakeFirst();
  return { id, inserted: row !== undefined };
}

export async function getCapRow(tx: Tx): Promise<{ monthLimitCents: number | null; billingEmail: string | null } | undefined> {
  const row = await tx.selectFrom('spend_caps').select(['month_limit_cents', 'billing_email']).executeTakeFirst();
  if (!row) return undefined;
  return { monthLimitCents: row.month_limit_cents === null ? null : Number(row.month_limit_cents), billingEmail: row.billing_email };
}

export async function upsertCapRow(tx: Tx, r: { tenantId: string; monthLimitCents: number | null; billingEmail?: string | null; updatedBy: string | null }): Promise<void> {
  const email = r.billingEmail === undefined ? {} : { billing_email: r.billingEmail };
  await tx
    .insertInto('spend_caps')
    .values({ tenant_id: r.tenantId, month_limit_cents: r.monthLimitCents, updated_by: r.updatedBy, ...email })
    .onConflict((oc) => oc.column('tenant_id').doUpdateSet({ month_limit_cents: r.monthLimitCents, updated_by: r.updatedBy, updated_at: new Date(), ...email }))
    .execute();
}

/** Serialises a tenant's charges for the rest of the transaction (the low-credit check reads the balance after its own). */
export async function lockTenantLedger(tx: Tx, tenantId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${'credit_ledger:' + tenantId}, 0))`.execute(tx);
}

/**
 * Machine time: the wall time the tenant's runs spent running within [from, to), in seconds (a run still running
 * counts up to now). Runs are what occupy a runner's worker or sandbox, so this is what a plan's machine time measures.
 */
export async function runSecondsBetween(tx: Tx, from: Date, to: Date): Promise<number> {
  const { rows } = await sql<{ seconds: string }>`
    select coalesce(sum(extract(epoch from (least(coalesce(finished_at, now()), ${to}) - greatest(started_at, ${from})))), 0)::text as seconds
    from runs where started_at < ${to} and coalesce(finished_at, now()) > ${from}`.execute(tx);
  return Math.max(0, Number(rows[0].seconds));
}
