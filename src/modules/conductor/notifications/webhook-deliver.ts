import { performance } from 'node:perf_hooks';
import { withTenant, type Tx } from '../../../db/index.ts';
import { describeError } from '../../../shared/errors.ts';
import { AddressRefused, type GuardedFetch } from '../../../shared/egress/index.ts';
import type { Logger } from '../../../shared/log.ts';
import { lockDelivery, recordAttempt, type EventPayload } from './deliveries.repo.ts';
import { getSigningEndpoint, markEndpointHealth, updateEndpoint, type Endpoint } from './endpoints.repo.ts';
import { settleNotification } from './notifications.repo.ts';
import { notifyIn, type NotifyDeps } from './notify.service.ts';
import { WEBHOOK_QUEUE, type WebhookJob } from './outbox.ts';
import { signWebhook } from './webhook-signature.ts';

/**
 * One attempt of one webhook delivery, as the `webhooks.deliver` queue's handler: a POST of the event's body signed
 * per Standard Webhooks (every current secret signs: two during a rotation's overlap), within the timeout
 * (SVC_NOTIFY_TIMEOUT_MS, 10 s). A 2xx delivers; 410 Gone disables the endpoint; an address the policy refuses fails
 * at once; anything else is retried on the schedule (SVC_WEBHOOK_SCHEDULE_S) by queuing the next attempt's job, at
 * its time, in the transaction that records this one, until the schedule runs out. An endpoint whose attempts have
 * all failed for SVC_WEBHOOK_DISABLE_AFTER_S is disabled and the tenant's admins are notified.
 *
 * The request goes out with no transaction open (a receiver may take the whole timeout). A job names the attempt it
 * makes, so a stale or repeated job (the queue delivers at least once) finds the delivery moved on and does nothing.
 */
export interface WebhookDeliverDeps extends NotifyDeps {
  log: Logger;
  fetch: GuardedFetch;
}

export function createWebhookDeliverer(deps: WebhookDeliverDeps) {
  const schedule = deps.config.webhookSchedule;

  async function disable(tx: Tx, tenantId: string, e: Endpoint, why: string): Promise<void> {
    if (!e.enabled) return;
    await updateEndpoint(tx, e.id, { enabled: false, disabledReason: why }, deps.box);
    deps.log.warn('webhook endpoint disabled', { tenantId, endpointId: e.id, why });
    await notifyIn(deps, tx, {
      tenantId,
      event: 'webhook.disabled',
      subject: `svc: webhook ${e.url} was disabled`,
      message: `The webhook endpoint ${e.id} (${e.url}) was disabled: ${why}. Enable it again with PATCH /api/webhooks/${e.id} {"enabled": true}; failed deliveries can be retried from its delivery log.`,
    });
  }

  return async function deliver(job: WebhookJob): Promise<{ status: string }> {
    const found = await withTenant(deps.db, job.tenantId, async (tx) => {
      const d = await lockDelivery(tx, job.deliveryId);
      if (!d || d.status !== 'pending' || d.attempts !== job.attempt) return undefined;
      // the schedule's first wait counts from the event (0 in the default schedule: at once)
      const due = job.attempt === 0 ? d.eventCreatedAt.getTime() + schedule[0] * 1000 : 0;
      if (due > Date.now() + 100) {
        await deps.jobs.send<WebhookJob>(WEBHOOK_QUEUE, job, { tx, startAfter: new Date(due) });
        return undefined;
      }
      const endpoint = await getSigningEndpoint(tx, d.endpointId, deps.box);
      if (!endpoint) return undefined;
      if (!endpoint.enabled) {
        await recordAttempt(tx, d.id, { status: 'failed', attempted: false, code: null, latencyMs: null, error: 'the endpoint is disabled', nextAttemptAt: null });
        if (d.notificationId) await settleNotification(tx, d.notificationId);
        return undefined;
      }
      return { d, endpoint };
    });
    if (!found) return { status: 'skipped' };
    const { d, endpoint } = found;

    const body = bodyOf(d.payload);
    let code: number | null = null;
    let error: string | null = null;
    let refused = false;
    const started = performance.now();
    try {
      const res = await deps.fetch(d.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'svc-webhooks', ...signWebhook(endpoint.secrets, d.payload.id, Math.floor(Date.now() / 1000), body) },
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(deps.config.timeoutMs),
      });
      code = res.status;
      await res.body?.cancel().catch(() => {});
      if (code < 200 || code >= 300) error = `the endpoint answered HTTP ${code}`;
    } catch (err) {
      refused = err instanceof AddressRefused;
      error = err instanceof Error && err.name === 'TimeoutError' ? `no answer within ${deps.config.timeoutMs} ms` : describeError(err);
    }
    const latencyMs = Math.round(performance.now() - started);

    return withTenant(deps.db, job.tenantId, async (tx) => {
      const now = await lockDelivery(tx, job.deliveryId);
      if (!now || now.status !== 'pending' || now.attempts !== job.attempt) return { status: 'moved-on' };
      const attempt = job.attempt + 1;
      const gone = code === 410;
      const wait = error === null || refused || gone ? undefined : schedule[attempt];
      const status = error === null ? 'delivered' : wait === undefined ? 'failed' : 'pending';
      const nextAttemptAt = wait === undefined ? null : new Date(Date.now() + wait * 1000);
      await recordAttempt(tx, d.id, { status, attempted: true, code, latencyMs, error, nextAttemptAt });
      if (nextAttemptAt) await deps.jobs.send<WebhookJob>(WEBHOOK_QUEUE, { tenantId: job.tenantId, deliveryId: d.id, attempt }, { tx, startAfter: nextAttemptAt });
      const health = await markEndpointHealth(tx, d.endpointId, error === null);
      if (health && gone) await disable(tx, job.tenantId, health, 'the endpoint answered 410 Gone');
      else if (health?.failingSince && Date.now() - Date.parse(health.failingSince) >= deps.config.webhookDisableAfterSeconds * 1000) {
        await disable(tx, job.tenantId, health, `every attempt failed for ${describeSeconds(deps.config.webhookDisableAfterSeconds)} (the last: ${error})`);
      }
      if (now.notificationId) await settleNotification(tx, now.notificationId);
      if (status === 'pending') deps.log.info('webhook delivery failed, will retry', { deliveryId: d.id, attempt, error, nextAttemptAt });
      return { status };
    });
  };
}

/** The body as sent: the stored payload in its documented key order. */
export function bodyOf(p: EventPayload): string {
  return JSON.stringify({ id: p.id, type: p.type, createdAt: p.createdAt, tenantId: p.tenantId, data: p.data });
}

function describeSeconds(s: number): string {
  if (s % 86_400 === 0) return `${s / 86_400} day${s === 86_400 ? '' : 's'}`;
  if (s % 3600 === 0) return `${s / 3600} hour${s === 3600 ? '' : 's'}`;
  return `${s} seconds`;
}
