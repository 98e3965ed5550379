import type { Tx } from '../../../db/index.ts';
import type { Notification, NotificationStatus } from '../../../contracts/run-callbacks.ts';
import type { Page } from '../../crud/index.ts';

/** SQL for `notifications` (sql/0003). Every call runs inside a tenant-scoped transaction. */
type Row = {
  id: string;
  channel: string;
  recipient: string | null;
  subject: string | null;
  message: string;
  status: NotificationStatus;
  detail: string;
  run_id: string | null;
  created_at: Date;
};

const COLUMNS = ['id', 'channel', 'recipient', 'subject', 'message', 'status', 'detail', 'run_id', 'created_at'] as const;

const toNotification = (r: Row): Notification => ({
  id: r.id,
  channel: r.channel,
  to: r.recipient,
  subject: r.subject,
  message: r.message,
  status: r.status,
  detail: r.detail,
  runId: r.run_id,
  createdAt: new Date(r.created_at).toISOString(),
});

export async function insertNotification(
  tx: Tx,
  n: { id: string; tenantId: string; channel: string; to: string | null; subject: string | null; message: string; status: NotificationStatus; detail: string; runId: string | null },
): Promise<Notification> {
  const row = await tx
    .insertInto('notifications')
    .values({ id: n.id, tenant_id: n.tenantId, channel: n.channel, recipient: n.to, subject: n.subject, message: n.message, status: n.status, detail: n.detail, run_id: n.runId })
    .returning(COLUMNS)
    .executeTakeFirstOrThrow();
  return toNotification(row as Row);
}

export async function listNotifications(tx: Tx, page: Page): Promise<{ items: Notification[]; total: number }> {
  let q = tx.selectFrom('notifications').select(COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc');
  if (page.limit !== undefined) q = q.limit(page.limit).offset(page.offset);
  const items = ((await q.execute()) as Row[]).map(toNotification);
  const total =
    page.limit === undefined ? items.length : Number((await tx.selectFrom('notifications').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  return { items, total };
}

export async function getNotification(tx: Tx, id: string): Promise<Notification | undefined> {
  const row = await tx.selectFrom('notifications').select(COLUMNS).where('id', '=', id).executeTakeFirst();
  return row ? toNotification(row as Row) : undefined;
}
