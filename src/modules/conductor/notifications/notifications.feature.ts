import { Hono } from 'hono';
import { createSecretBox } from '../../../shared/secret-box.ts';
import type { Feature } from '../feature.ts';
import type { IdentityEnv } from '../identity/index.ts';
import { createDeliverer } from './deliver.ts';
import { NOTIFICATION_REQUESTED, REQUESTED_QUEUE, onRunEnded, onRunFinished, onRunStarted, produceRequested, type RequestedNotification } from './events.ts';
import { notificationRoutes } from './notifications.routes.ts';
import { readEndpointsAhead, type EndpointsAhead } from './endpoints.repo.ts';
import { DELIVER_QUEUE, type DeliveryJob } from './notify.service.ts';
import { WEBHOOK_QUEUE, type WebhookJob } from './outbox.ts';
import { createWebhookDeliverer } from './webhook-deliver.ts';
import { webhookRoutes } from './webhooks.routes.ts';

/**
 * `/api/notifications` and `/api/webhooks`, and their delivery: the `notifications.deliver` queue (email, one job
 * per delivery, retried with backoff: SVC_NOTIFY_RETRY_LIMIT, SVC_NOTIFY_RETRY_DELAY_S), the `webhooks.deliver` queue
 * (one job per attempt, on SVC_WEBHOOK_SCHEDULE_S: the one delivery engine of every webhook, notifications' included),
 * the queue of notifications other features request, the runFinished subscriber that reports failed runs, and the
 * run hooks' in-transaction listeners that put run events in the webhook outbox.
 */
export const notificationsFeature: Feature = ({ db, jobs, hooks, config, secrets, log, tenantFetch }) => {
  const box = createSecretBox(secrets.secretsKey);
  const deps = { db, jobs, config: config.notifications, box, privateAddresses: config.privateAddresses };
  const deliver = createDeliverer({ db, config: config.notifications, log: log.child('notifications'), box, fetch: tenantFetch });
  const deliverWebhook = createWebhookDeliverer({ ...deps, log: log.child('webhooks'), fetch: tenantFetch });
  const delay = config.notifications.retryDelaySeconds;
  // the endpoints are read ahead of the listeners, in a write of the run path's own (no round trip of their own)
  hooks.onRunRecorded((tx, run, ahead) => onRunStarted(deps, tx, run, ahead as EndpointsAhead | undefined), { readAhead: readEndpointsAhead });
  hooks.onRunEnding((tx, tenantId, runId, ahead) => onRunEnded(deps, tx, tenantId, runId, ahead as EndpointsAhead | undefined), { readAhead: readEndpointsAhead });
  return {
    api: new Hono<IdentityEnv>().route('/notifications', notificationRoutes(deps)).route('/webhooks', webhookRoutes(deps)),
    start: async () => {
      await jobs.define<DeliveryJob>(DELIVER_QUEUE, deliver, {
        retryLimit: config.notifications.retryLimit,
        retryDelay: delay,
        retryBackoff: delay > 0,
        ...(delay > 0 ? { retryDelayMax: 3600 } : {}),
        expireInSeconds: Math.ceil(config.notifications.timeoutMs / 1000) + 30,
        deleteAfterSeconds: 7 * 86_400,
        pollingIntervalSeconds: 0.5,
        concurrency: 2,
      });
      // the schedule is the handler's (each attempt queues the next); these retries only cover a handler that failed
      // itself (the database away), which the attempt number makes harmless to repeat
      await jobs.define<WebhookJob>(WEBHOOK_QUEUE, deliverWebhook, {
        retryLimit: 10,
        retryDelay: 1,
        retryBackoff: true,
        retryDelayMax: 300,
        expireInSeconds: Math.ceil(config.notifications.timeoutMs / 1000) + 30,
        deleteAfterSeconds: 86_400,
        pollingIntervalSeconds: 0.5,
        concurrency: 4,
      });
      await jobs.define<RequestedNotification>(REQUESTED_QUEUE, (n) => produceRequested(deps, n), { retryLimit: 10, retryDelay: 1, retryBackoff: true, retryDelayMax: 300, pollingIntervalSeconds: 1 });
      await jobs.subscribe(NOTIFICATION_REQUESTED, REQUESTED_QUEUE);
      await hooks.onRunFinished('notifications', (ev) => onRunFinished(deps, ev));
    },
  };
};
