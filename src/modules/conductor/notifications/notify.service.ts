import type { Kysely } from 'kysely';
import { withTenant, type DB, type Tx } from '../../../db/index.ts';
import type { Notification } from '../../../contracts/run-callbacks.ts';
import type { NotificationsConfig } from '../../../config/config.ts';
import { prefixedId } from '../../../shared/ids.ts';
import type { SecretBox } from '../../../shared/secret-box.ts';
import type { Jobs } from '../jobs/index.ts';
import { getNotification, insertDelivery, insertNotification } from './notifications.repo.ts';
import { readSettings } from './settings.repo.ts';
import { webhookWants } from './settings.schema.ts';
import type { PrivateAddresses } from '../../../shared/egress/index.ts';

/**
 * Producing a notification: stored with one delivery per channel that can take it (an email to its recipients when
 * an SMTP server is configured, a call of each webhook that wants the event), each delivery a job on the queue
 * `DELIVER_QUEUE` queued in the same transaction. With no channel it is `undeliverable` at once, saying why.
 */
export const DELIVER_QUEUE = 'notifications.deliver';

export interface NotifyDeps {
  db: Kysely<DB>;
  jobs: Jobs;
  config: NotificationsConfig;
  /** Seals and opens webhook secrets at rest. */
  box: SecretBox;
  /** SVC_PRIVATE_ADDRESSES: with `deny`, webhook URLs on internal addresses are refused when saved (400); absent: allow. */
  privateAddresses?: PrivateAddresses;
}

export interface NotificationInput {
  tenantId: string;
  event: string;
  /** `email` (default) sends email too; another channel name (e.g. `inbox`) only stores it and calls webhooks. */
  channel?: string;
  /** An explicit recipient (the notify tool's `to`); otherwise the settings' email recipients. */
  to?: string | null;
  subject?: string | null;
  message: string;
  runId?: string | null;
}

export interface DeliveryJob {
  tenantId: string;
  deliveryId: string;
}

export async function notify(deps: NotifyDeps, input: NotificationInput): Promise<Notification> {
  return withTenant(deps.db, input.tenantId, (tx) => notifyIn(deps, tx, input));
}

/** Inside the caller's tenant transaction (the notification exists iff it commits). */
export async function notifyIn(deps: NotifyDeps, tx: Tx, input: NotificationInput): Promise<Notification> {
  const settings = await readSettings(tx, input.tenantId, deps.box);
  const id = prefixedId('ntf');
  const channel = input.channel ?? 'email';
  const recipients = channel !== 'email' || !settings.email.enabled ? [] : input.to ? [input.to] : settings.email.to;
  const email = recipients.length > 0 && deps.config.smtpUrl !== undefined;
  const webhooks = settings.webhooks.filter((w) => webhookWants(w, input.event));
  const why: string[] = [];
  if (channel === 'email' && !settings.email.enabled) why.push('email is disabled in the notification settings');
  else if (channel === 'email' && recipients.length === 0) why.push('no email recipient (no `to`, and none in the notification settings)');
  else if (channel === 'email' && !email) why.push('no SMTP server is configured (SVC_SMTP_URL)');
  if (!webhooks.length) why.push(`no webhook takes ${input.event}`);
  const count = (email ? 1 : 0) + webhooks.length;
  await insertNotification(tx, {
    id,
    tenantId: input.tenantId,
    channel,
    to: input.to ?? null,
    subject: input.subject ?? null,
    message: input.message,
    status: count ? 'queued' : 'undeliverable',
    detail: count ? `${count} ${count === 1 ? 'delivery' : 'deliveries'} queued` : `stored, not delivered: ${why.join('; ')}`,
    event: input.event,
    runId: input.runId ?? null,
  });
  const deliveries = [
    ...(email ? [{ channel: 'email' as const, target: recipients.join(', '), webhookId: null }] : []),
    ...webhooks.map((w) => ({ channel: 'webhook' as const, target: w.url, webhookId: w.id })),
  ];
  for (const [position, d] of deliveries.entries()) {
    const deliveryId = prefixedId('dlv');
    await insertDelivery(tx, { id: deliveryId, tenantId: input.tenantId, notificationId: id, position, ...d });
    await deps.jobs.send<DeliveryJob>(DELIVER_QUEUE, { tenantId: input.tenantId, deliveryId }, { tx });
  }
  return (await getNotification(tx, id))!;
}
