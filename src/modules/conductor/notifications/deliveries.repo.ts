import { sql } from 'kysely';
import { jsonb, type Tx } from '../../../db/index.ts';
import type { WebhookDeliveryStatus } from '../../../db/tables/conductor.ts';
import type { Page } from '../../crud/index.ts';

/** SQL for the webhook outbox (sql/0027): `webhook_events` and their `webhook_deliveries`. Tenant transactions only. */
export interface EventPayload {
  id: string;
  type: string;
  createdAt: string;
  tenantId: string;
  data: Record<string, unknown>;
}

/** A delivery as the log shows it (`GET /api/webhooks/{id}/deliveries`). */
export interface Delivery {
  id: string;
  endpointId: string;
  eventId: string;
  event: string;
  url: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  lastResponseCode: number | null;
  lastLatencyMs: number | null;
  lastError: string | null;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
  createdAt: string;
  updatedAt: string;
}

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

/** Writes the event unless one with its dedup key exists: true when written. */
export async function insertEvent(tx: Tx, e: { payload: EventPayload; key: string | null; notificationId: string | null }): Promise<boolean> {
  const row = await tx
    .insertInto('webhook_events')
    .values({ id: e.payload.id, tenant_id: e.payload.tenantId, type: e.payload.type, dedup_key: e.key, payload: jsonb(e.payload), notification_id: e.notificationId, created_at: e.payload.createdAt })
    .onConflict((oc) => oc.columns(['tenant_id', 'dedup_key']).doNothing())
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

export async function insertDelivery(tx: Tx, d: { id: string; tenantId: string; eventId: string; endpointId: string; url: string }): Promise<void> {
  await tx
    .insertInto('webhook_deliveries')
    .values({ id: d.id, tenant_id: d.tenantId, event_id: d.eventId, endpoint_id: d.endpointId, url: d.url, next_attempt_at: new Date() })
    .execute();
}

const deliveryColumns = [
  'd.id',
  'd.endpoint_id',
  'd.event_id',
  'e.type',
  'd.url',
  'd.status',
  'd.attempts',
  'd.last_status_code',
  'd.last_latency_ms',
  'd.last_error',
  'd.next_attempt_at',
  'd.delivered_at',
  'd.created_at',
  'd.updated_at',
] as const;

type DeliveryRow = {
  id: string;
  endpoint_id: string;
  event_id: string;
  type: string;
  url: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  last_status_code: number | null;
  last_latency_ms: number | null;
  last_error: string | null;
  next_attempt_at: Date | null;
  delivered_at: Date | null;
  created_at: Date;
  updated_at: Date;
};

const toDelivery = (r: DeliveryRow): Delivery => ({
  id: r.id,
  endpointId: r.endpoint_id,
  eventId: r.event_id,
  event: r.type,
  url: r.url,
  status: r.status,
  attempts: r.attempts,
  lastResponseCode: r.last_status_code,
  lastLatencyMs: r.last_latency_ms,
  lastError: r.last_error,
  nextAttemptAt: iso(r.next_attempt_at),
  deliveredAt: iso(r.delivered_at),
  createdAt: iso(r.created_at)!,
  updatedAt: iso(r.updated_at)!,
});

const deliveries = (tx: Tx) => tx.selectFrom('webhook_deliveries as d').innerJoin('webhook_events as e', 'e.id', 'd.event_id');

export async function listDeliveries(tx: Tx, endpointId: string, page: Page): Promise<{ items: Delivery[]; total: number }> {
  let q = deliveries(tx).select(deliveryColumns).where('d.endpoint_id', '=', endpointId).orderBy('d.created_at', 'desc').orderBy('d.id', 'desc');
  if (page.limit !== undefined) q = q.limit(page.limit).offset(page.offset);
  const items = ((await q.execute()) as DeliveryRow[]).map(toDelivery);
  const total =
    page.limit === undefined
      ? items.length
      : Number((await tx.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll<number>().as('n')).where('endpoint_id', '=', endpointId).executeTakeFirstOrThrow()).n);
  return { items, total };
}

export async function getDelivery(tx: Tx, endpointId: string, id: string): Promise<Delivery | undefined> {
  const row = await deliveries(tx).select(deliveryColumns).where('d.endpoint_id', '=', endpointId).where('d.id', '=', id).executeTakeFirst();
  return row ? toDelivery(row as DeliveryRow) : undefined;
}

/** A delivery, locked (one attempt at a time), with its event's body and the notification it reports. */
export async function lockDelivery(tx: Tx, id: string): Promise<(Delivery & { payload: EventPayload; notificationId: string | null; eventCreatedAt: Date }) | undefined> {
  const row = await deliveries(tx)
    .select([...deliveryColumns, 'e.payload', 'e.notification_id', 'e.created_at as event_created_at'])
    .where('d.id', '=', id)
    .forUpdate('d')
    .executeTakeFirst();
  if (!row) return undefined;
  const r = row as unknown as DeliveryRow & { payload: EventPayload; notification_id: string | null; event_created_at: Date };
  return { ...toDelivery(r), payload: r.payload, notificationId: r.notification_id, eventCreatedAt: new Date(r.event_created_at) };
}

export interface AttemptOutcome {
  status: WebhookDeliveryStatus;
  /** false when no request was made (the endpoint was disabled): the count stays. */
  attempted: boolean;
  code: number | null;
  latencyMs: number | null;
  error: string | null;
  nextAttemptAt: Date | null;
}

export async function recordAttempt(tx: Tx, id: string, o: AttemptOutcome): Promise<void> {
  await tx
    .updateTable('webhook_deliveries')
    .set((eb) => ({
      status: o.status,
      attempts: o.attempted ? eb('attempts', '+', 1) : eb.ref('attempts'),
      ...(o.attempted ? { last_status_code: o.code, last_latency_ms: o.latencyMs } : {}),
      last_error: o.error,
      next_attempt_at: o.nextAttemptAt,
      updated_at: new Date(),
      ...(o.status === 'delivered' ? { delivered_at: new Date() } : {}),
    }))
    .where('id', '=', id)
    .execute();
}

/** A delivery asked to go again (the retry route): pending, due now. Its attempt count goes on. */
export async function markPending(tx: Tx, id: string): Promise<void> {
  await tx.updateTable('webhook_deliveries').set({ status: 'pending', next_attempt_at: new Date(), updated_at: new Date() }).where('id', '=', id).execute();
}

/** The webhook deliveries of notifications, as a notification lists them (after its email), in endpoint order. */
export async function deliveriesOfNotifications(tx: Tx, notificationIds: string[]) {
  if (notificationIds.length === 0) return [];
  return tx
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .leftJoin('webhook_endpoints as w', 'w.id', 'd.endpoint_id')
    .select(['d.id', 'd.endpoint_id', 'd.url', 'd.status', 'd.attempts', 'd.last_error', 'd.delivered_at', 'e.notification_id'])
    .where('e.notification_id', 'in', notificationIds)
    .orderBy(sql`w.position`)
    .orderBy('d.created_at')
    .execute();
}
