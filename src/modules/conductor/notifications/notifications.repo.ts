import { sql } from 'kysely';
import type { Tx } from '../../../db/index.ts';
import type { Notification, NotificationDelivery, NotificationStatus } from '../../../contracts/run-callbacks.ts';
import type { Page } from '../../crud/index.ts';
import { deliveriesOfNotifications } from './deliveries.repo.ts';

/** SQL for `notifications` (sql/0003, 0018) and their `notification_deliveries`. Every call runs in a tenant-scoped transaction. */
type Row = {
  id: string;
  channel: string;
  recipient: string | null;
  subject: string | null;
  message: string;
  status: NotificationStatus;
  detail: string;
  event: string;
  run_id: string | null;
  created_at: Date;
};
type DeliveryRow = {
  id: string;
  notification_id: string;
  channel: 'email' | 'webhook';
  target: string;
  webhook_id: string | null;
  status: 'queued' | 'sent' | 'failed';
  attempts: number;
  last_error: string | null;
  delivered_at: Date | null;
};

const COLUMNS = ['id', 'channel', 'recipient', 'subject', 'message', 'status', 'detail', 'event', 'run_id', 'created_at'] as const;
const DELIVERY_COLUMNS = ['id', 'notification_id', 'channel', 'target', 'webhook_id', 'status', 'attempts', 'last_error', 'delivered_at'] as const;

const toDelivery = (d: DeliveryRow): NotificationDelivery => ({
  id: d.id,
  channel: d.channel,
  target: d.target,
  webhookId: d.webhook_id,
  status: d.status,
  attempts: d.attempts,
  lastError: d.last_error,
  deliveredAt: d.delivered_at ? new Date(d.delivered_at).toISOString() : null,
});

/** A webhook delivery (the webhook outbox's, sql/0027) in a notification's words: delivered is `sent`, pending `queued`. */
type WebhookDeliveryRow = Awaited<ReturnType<typeof deliveriesOfNotifications>>[number];
const fromWebhook = (d: WebhookDeliveryRow): DeliveryRow => ({
  id: d.id,
  notification_id: d.notification_id!,
  channel: 'webhook',
  target: d.url,
  webhook_id: d.endpoint_id,
  status: d.status === 'delivered' ? 'sent' : d.status === 'pending' ? 'queued' : 'failed',
  attempts: d.attempts,
  last_error: d.last_error,
  delivered_at: d.delivered_at,
});

const toNotification = (r: Row, deliveries: DeliveryRow[]): Notification => ({
  id: r.id,
  channel: r.channel,
  to: r.recipient,
  subject: r.subject,
  message: r.message,
  status: r.status,
  detail: r.detail,
  event: r.event,
  runId: r.run_id,
  createdAt: new Date(r.created_at).toISOString(),
  deliveries: deliveries.filter((d) => d.notification_id === r.id).map(toDelivery),
});

async function withDeliveries(tx: Tx, rows: Row[]): Promise<Notification[]> {
  if (rows.length === 0) return [];
  const deliveries = (await tx
    .selectFrom('notification_deliveries')
    .select(DELIVERY_COLUMNS)
    .where('notification_id', 'in', rows.map((r) => r.id))
    .orderBy('position')
    .execute()) as DeliveryRow[];
  const webhooks = (await deliveriesOfNotifications(tx, rows.map((r) => r.id))).map(fromWebhook);
  return rows.map((r) => toNotification(r, [...deliveries, ...webhooks]));
}

/** A notification as it is first written: the stored shape without its timestamp and deliveries, with its tenant. */
export type NewNotification = Omit<Notification, 'createdAt' | 'deliveries'> & { tenantId: string };

export async function insertNotification(tx: Tx, n: NewNotification): Promise<void> {
  await tx
    .insertInto('notifications')
    .values({ id: n.id, tenant_id: n.tenantId, channel: n.channel, recipient: n.to, subject: n.subject, message: n.message, status: n.status, detail: n.detail, event: n.event, run_id: n.runId })
    .execute();
}

export async function insertDelivery(
  tx: Tx,
  d: { id: string; tenantId: string; notificationId: string; channel: 'email' | 'webhook'; target: string; webhookId: string | null; position: number },
): Promise<void> {
  await tx
    .insertInto('notification_deliveries')
    .values({ id: d.id, tenant_id: d.tenantId, notification_id: d.notificationId, channel: d.channel, target: d.target, webhook_id: d.webhookId, position: d.position })
    .execute();
}

/** Whether a notification of this event about this run exists (run hooks deliver at least once). */
export async function hasRunNotification(tx: Tx, event: string, runId: string): Promise<boolean> {
  const row = await tx.selectFrom('notifications').select('id').where('event', '=', event).where('run_id', '=', runId).executeTakeFirst();
  return row !== undefined;
}

export async function listNotifications(tx: Tx, page: Page): Promise<{ items: Notification[]; total: number }> {
  let q = tx.selectFrom('notifications').select(COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc');
  if (page.limit !== undefined) q = q.limit(page.limit).offset(page.offset);
  const items = await withDeliveries(tx, (await q.execute()) as Row[]);
  const total =
    page.limit === undefined ? items.length : Number((await tx.selectFrom('notifications').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  return { items, total };
}

export async function getNotification(tx: Tx, id: string): Promise<Notification | undefined> {
  const row = await tx.selectFrom('notifications').select(COLUMNS).where('id', '=', id).executeTakeFirst();
  return row ? (await withDeliveries(tx, [row as Row]))[0] : undefined;
}

/** A delivery and its notification, the delivery row locked (one attempt at a time). */
export async function lockDelivery(tx: Tx, id: string): Promise<{ delivery: NotificationDelivery; notification: Notification } | undefined> {
  const d = (await tx.selectFrom('notification_deliveries').select(DELIVERY_COLUMNS).where('id', '=', id).forUpdate().executeTakeFirst()) as DeliveryRow | undefined;
  if (!d) return undefined;
  const n = (await tx.selectFrom('notifications').select(COLUMNS).where('id', '=', d.notification_id).executeTakeFirstOrThrow()) as Row;
  return { delivery: toDelivery(d), notification: toNotification(n, [d]) };
}

/** Records one attempt: `sent`, still `queued` (a retry follows) or `failed` (no retry left). */
export async function recordAttempt(tx: Tx, id: string, status: 'queued' | 'sent' | 'failed', error: string | null): Promise<void> {
  await tx
    .updateTable('notification_deliveries')
    .set((eb) => ({
      status,
      attempts: eb('attempts', '+', 1),
      last_error: error,
      updated_at: new Date(),
      ...(status === 'sent' ? { delivered_at: new Date() } : {}),
    }))
    .where('id', '=', id)
    .execute();
}

/**
 * The notification's status from its deliveries (locked, so two deliveries finishing together agree): `queued` while
 * one is pending, else `failed` when one failed, else `sent`.
 */
export async function settleNotification(tx: Tx, notificationId: string): Promise<void> {
  await tx.selectFrom('notifications').select('id').where('id', '=', notificationId).forUpdate().execute();
  // its email delivery and its webhook deliveries (the outbox's, under their own names)
  const { rows } = await sql<{ queued: string; sent: string; failed: string }>`
    SELECT count(*) FILTER (WHERE s IN ('queued', 'pending')) AS queued, count(*) FILTER (WHERE s IN ('sent', 'delivered')) AS sent,
           count(*) FILTER (WHERE s = 'failed') AS failed
    FROM (SELECT status AS s FROM notification_deliveries WHERE notification_id = ${notificationId}
          UNION ALL
          SELECT d.status FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id WHERE e.notification_id = ${notificationId}) AS x`.execute(tx);
  const [queued, sent, failed] = [Number(rows[0].queued), Number(rows[0].sent), Number(rows[0].failed)];
  const total = queued + sent + failed;
  const status: NotificationStatus = queued > 0 ? 'queued' : failed > 0 ? 'failed' : 'sent';
  const detail =
    queued > 0 ? `${sent} of ${total} deliveries sent, ${queued} pending` : failed > 0 ? `${failed} of ${total} deliveries failed after every attempt` : `${total} of ${total} deliveries sent`;
  await tx.updateTable('notifications').set({ status, detail }).where('id', '=', notificationId).execute();
}

/** The message of a run's terminal `error` event, if it has one. */
export async function lastRunError(tx: Tx, runId: string): Promise<string | undefined> {
  const row = await tx
    .selectFrom('run_events')
    .select(sql<string | null>`coalesce(event->>'message', event->>'error')`.as('message'))
    .where('run_id', '=', runId)
    .where(sql<string>`event->>'type'`, '=', 'error')
    .orderBy('seq', 'desc')
    .executeTakeFirst();
  return row?.message ?? undefined;
}
