import { Hono } from 'hono';
import { createSecretBox } from '../../../shared/secret-box.ts';
import type { Feature } from '../feature.ts';
import type { IdentityEnv } from '../identity/index.ts';
import { createDeliverer } from './deliver.ts';
import { NOTIFICATION_REQUESTED, REQUESTED_QUEUE, onRunFinished, produceRequested, type RequestedNotification } from './events.ts';
import { notificationRoutes } from './notifications.routes.ts';
import { DELIVER_QUEUE, type DeliveryJob } from './notify.service.ts';

/**
 * `/api/notifications` and the delivery of notifications: the `notifications.deliver` queue (one job per delivery,
 * retried with backoff: SVC_NOTIFY_RETRY_LIMIT, SVC_NOTIFY_RETRY_DELAY_S), the queue of notifications other features
 * request, and the runFinished subscriber that reports failed runs.
 */
export const notificationsFeature: Feature = ({ db, jobs, hooks, config, secrets, log, tenantFetch }) => {
  const box = createSecretBox(secrets.secretsKey);
  const deps = { db, jobs, config: config.notifications, box, privateAddresses: config.privateAddresses };
  const deliver = createDeliverer({ db, config: config.notifications, log: log.child('notifications'), box, fetch: tenantFetch });
  const delay = config.notifications.retryDelaySeconds;
  return {
    api: new Hono<IdentityEnv>().route('/notifications', notificationRoutes(deps)),
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
      await jobs.define<RequestedNotification>(REQUESTED_QUEUE, (n) => produceRequested(deps, n), { retryLimit: 10, retryDelay: 1, retryBackoff: true, retryDelayMax: 300, pollingIntervalSeconds: 1 });
      await jobs.subscribe(NOTIFICATION_REQUESTED, REQUESTED_QUEUE);
      await hooks.onRunFinished('notifications', (ev) => onRunFinished(deps, ev));
    },
  };
};
