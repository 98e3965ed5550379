import type { Tx } from '../../../db/index.ts';

/** SQL for Stripe checkouts and the Stripe events already handled (tenant-scoped transactions). */
export interface CheckoutRow {
  id: string;
  cents: number;
  status: 'open' | 'complete' | 'expired';
  url: string | null;
  customerId: string | null;
  createdAt: string;
  creditedAt: string | null;
}

const toRow = (r: { id: string; cents: string; status: CheckoutRow['status']; url: string | null; customer_id: string | null; created_at: Date | string; credited_at: Date | string | null }): CheckoutRow => ({
  id: r.id,
  cents: Number(r.cents),
  status: r.status,
  url: r.url,
  customerId: r.customer_id,
  createdAt: new Date(r.created_at).toISOString(),
  creditedAt: r.credited_at === null ? null : new Date(r.credited_at).toISOString(),
});

export async function insertCheckout(tx: Tx, c: { id: string; tenantId: string; cents: number; url: string | null; createdBy: string | null }): Promise<void> {
  await tx.insertInto('billing_checkouts').values({ id: c.id, tenant_id: c.tenantId, cents: c.cents, url: c.url, created_by: c.createdBy }).execute();
}

export async function findCheckout(tx: Tx, id: string): Promise<CheckoutRow | undefined> {
  const r = await tx.selectFrom('billing_checkouts').selectAll().where('id', '=', id).executeTakeFirst();
  return r ? toRow(r) : undefined;
}

export async function setCheckoutStatus(tx: Tx, id: string, status: CheckoutRow['status']): Promise<void> {
  await tx.updateTable('billing_checkouts').set({ status }).where('id', '=', id).where('credited_at', 'is', null).execute();
}

/** Marks a checkout paid; answers its cents only the first time (the caller grants them). */
export async function markCredited(tx: Tx, id: string, customerId: string | null): Promise<number | undefined> {
  const r = await tx
    .updateTable('billing_checkouts')
    .set({ status: 'complete', credited_at: new Date(), customer_id: customerId })
    .where('id', '=', id)
    .where('credited_at', 'is', null)
    .returning('cents')
    .executeTakeFirst();
  return r ? Number(r.cents) : undefined;
}

/** The tenant's Stripe customer, from its latest paid checkout. */
export async function latestCustomer(tx: Tx): Promise<string | undefined> {
  const r = await tx.selectFrom('billing_checkouts').select('customer_id').where('customer_id', 'is not', null).orderBy('credited_at', 'desc').executeTakeFirst();
  return r?.customer_id ?? undefined;
}

/** Records a Stripe event id; false when it was recorded before (a replay). */
export async function recordEvent(tx: Tx, e: { id: string; tenantId: string; type: string }): Promise<boolean> {
  const r = await tx.insertInto('billing_events').values({ id: e.id, tenant_id: e.tenantId, type: e.type }).onConflict((oc) => oc.column('id').doNothing()).returning('id').executeTakeFirst();
  return r !== undefined;
}

