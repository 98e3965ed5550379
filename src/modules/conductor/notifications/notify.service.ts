import type { Kysely } from 'kysely';
import { withTenant, type DB, type Tx } from '../../../db/index.ts';
import type { Notification } from '../../../contracts/run-callbacks.ts';
import type { NotificationsConfig } from '../../../config/config.ts';
import { prefixedId } from '../../../shared/ids.ts';
import type { SecretBox } from '../../../shared/secret-box.ts';
import type { Jobs } from '../jobs/index.ts';
import { getNotification, insertDelivery, insertNotification } from './notifications.repo.ts';
import { readEmailSettings } from './settings.repo.ts';
import { emitTo, subscribersOf } from './outbox.ts';
import type { EventType } from './catalogue.ts';
import type { PrivateAddresses } from '../../../shared/egress/index.ts';

/**
 * Producing a notification: stored with one delivery per channel that can take it (an email to its recipients when
 * an SMTP server is configured, a job on `DELIVER_QUEUE`; and the notification as an event of the webhook outbox for
 * each endpoint that subscribes to it, delivered by the webhooks' queue), all in the same transaction. With no
 * channel it is `undeliverable` at once, saying why.
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
  /** The event's webhook goes out on its own, with a payload of its own (run.approval_required): none for the notification. */
  ownWebhook?: boolean;
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
  const settings = { email: await readEmailSettings(tx) };
  const id = prefixedId('ntf');
  const channel = input.channel ?? 'email';
  const recipients = channel !== 'email' || !settings.email.enabled ? [] : input.to ? [input.to] : settings.email.to;
  const email = recipients.length > 0 && deps.config.smtpUrl !== undefined;
  const webhooks = input.ownWebhook ? [] : await subscribersOf(tx, input.tenantId, input.event);
  const why: string[] = [];
  if (channel === 'email' && !settings.email.enabled) why.push('email is disabled in the notification settings');
  else if (channel === 'email' && recipients.length === 0) why.push('no email recipient (no `to`, and none in the notification settings)');
  else if (channel === 'email' && !email) why.push('no SMTP server is configured (SVC_SMTP_URL)');
  if (input.ownWebhook) why.push(`its webhook event ${input.event} is sent on its own`);
  else if (!webhooks.length) why.push(`no webhook takes ${input.event}`);
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
  if (email) {
    const deliveryId = prefixedId('dlv');
    await insertDelivery(tx, { id: deliveryId, tenantId: input.tenantId, notificationId: id, position: 0, channel: 'email', target: recipients.join(', '), webhookId: null });
    await deps.jobs.send<DeliveryJob>(DELIVER_QUEUE, { tenantId: input.tenantId, deliveryId }, { tx });
  }
  if (webhooks.length) {
    const { deliveries: _omit, ...data } = (await getNotification(tx, id))!;
    await emitTo(deps.jobs, tx, { tenantId: input.tenantId, type: input.event as EventType, data, notificationId: id }, webhooks);
  }
  return (await getNotification(tx, id))!;
}
