import type { Kysely } from 'kysely';
import type { Transporter } from 'nodemailer';
import { withTenant, type DB } from '../../../db/index.ts';
import type { Notification, NotificationDelivery } from '../../../contracts/run-callbacks.ts';
import type { NotificationsConfig } from '../../../config/config.ts';
import { describeError } from '../../../shared/errors.ts';
import type { Logger } from '../../../shared/log.ts';
import type { SecretBox } from '../../../shared/secret-box.ts';
import type { JobContext } from '../jobs/index.ts';
import { lockDelivery, recordAttempt, settleNotification } from './notifications.repo.ts';
import { readEmailSettings } from './settings.repo.ts';
import { getSigningEndpoint } from './endpoints.repo.ts';
import type { DeliveryJob } from './notify.service.ts';
import { signWebhook } from './webhook-signature.ts';
import { AddressRefused, type GuardedFetch } from '../../../shared/egress/index.ts';

/**
 * One attempt of one email delivery, as the job queue's handler: email over SMTP (nodemailer). (Webhooks have their
 * own deliveries since sql/0027, webhook-deliver.ts; a webhook delivery queued here before that upgrade is still
 * made, signed per Standard Webhooks with its endpoint's secret.) The attempt and its outcome are recorded on the delivery; a failure with retries left throws, so
 * the queue retries it with backoff; the last failure marks it `failed`. A delivery already settled is left alone
 * (the queue delivers at least once).
 */
export interface DeliverDeps {
  db: Kysely<DB>;
  config: NotificationsConfig;
  log: Logger;
  box: SecretBox;
  /** How webhooks are called: the guarded fetcher, which refuses an address the policy forbids when it connects. */
  fetch: GuardedFetch;
}

/** A failure no retry can mend (the webhook was removed). A refused address (AddressRefused) is one too. */
class Permanent extends Error {}

export function createDeliverer(deps: DeliverDeps) {
  // nodemailer is loaded with the first email, not at boot (most servers never send one)
  let transport: Promise<Transporter> | undefined;
  const mailer = () =>
    (transport ??= import('nodemailer').then(({ createTransport }) =>
      createTransport({
        url: deps.config.smtpUrl!,
        connectionTimeout: deps.config.timeoutMs,
        greetingTimeout: deps.config.timeoutMs,
        socketTimeout: deps.config.timeoutMs,
      }),
    ));

  async function attempt(n: Notification, d: NotificationDelivery, via: { from: string; secret: string | undefined }): Promise<void> {
    const webhookSecret = via.secret;
    if (d.channel === 'email') {
      if (!deps.config.smtpUrl) throw new Error('no SMTP server is configured (SVC_SMTP_URL)');
      await (await mailer()).sendMail({
        from: via.from,
        to: d.target,
        subject: n.subject ?? subjectOf(n),
        text: n.message,
        headers: { 'X-Svc-Notification-Id': n.id, 'X-Svc-Event': n.event },
      });
      return;
    }
    if (!webhookSecret) throw new Permanent(`webhook ${d.webhookId} no longer exists`);
    const { deliveries: _omit, ...data } = n;
    const body = JSON.stringify({ type: n.event, timestamp: new Date().toISOString(), data });
    const res = await deps.fetch(d.target, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'svc-webhooks', ...signWebhook(webhookSecret, d.id, Math.floor(Date.now() / 1000), body) },
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(deps.config.timeoutMs),
    });
    await res.body?.cancel().catch(() => {});
    if (res.status < 200 || res.status >= 300) throw new Error(`webhook answered HTTP ${res.status}`);
  }
  // The attempt runs outside any transaction (an SMTP server or a receiver may take the whole timeout, and holding a
  // database connection that long would starve the API); one job per delivery, and the queue runs a job once at a
  // time, so attempts of one delivery never overlap. The outcome is recorded only on a delivery still queued.
  return async function deliver(job: DeliveryJob, ctx: JobContext): Promise<{ status: string }> {
    const found = await withTenant(deps.db, job.tenantId, async (tx) => {
      const d = await lockDelivery(tx, job.deliveryId);
      if (!d || d.delivery.status !== 'queued') return undefined;
      const email = await readEmailSettings(tx);
      const endpoint = d.delivery.webhookId ? await getSigningEndpoint(tx, d.delivery.webhookId, deps.box) : undefined;
      return { ...d, via: { from: email.from ?? deps.config.smtpFrom, secret: endpoint?.secrets[0] } };
    });
    if (!found) return { status: 'settled' };
    let error: string | undefined;
    let permanent = false;
    try {
      await attempt(found.notification, found.delivery, found.via);
    } catch (err) {
      error = describeError(err);
      permanent = err instanceof Permanent || err instanceof AddressRefused;
    }
    const status = error === undefined ? 'sent' : permanent || ctx.retryCount >= deps.config.retryLimit ? 'failed' : 'queued';
    await withTenant(deps.db, job.tenantId, async (tx) => {
      const now = await lockDelivery(tx, job.deliveryId);
      if (!now || now.delivery.status !== 'queued') return;
      await recordAttempt(tx, job.deliveryId, status, error ?? null);
      await settleNotification(tx, found.notification.id);
    });
    if (status === 'queued') {
      deps.log.info('notification delivery failed, will retry', { deliveryId: job.deliveryId, attempt: ctx.retryCount + 1, error });
      throw new Error(error);
    }
    return { status };
  };
}

function subjectOf(n: Notification): string {
  switch (n.event) {
    case 'run.failed':
      return `svc: run ${n.runId} failed`;
    case 'automation.disabled':
      return 'svc: an automation was disabled';
    case 'workflow.paused':
      return 'svc: a workflow was paused';
    case 'credit.low':
      return 'svc: credit is running low';
    case 'run.approval_required':
      return `svc: run ${n.runId} waits for your approval`;
    default:
      return 'svc notification';
  }
}
