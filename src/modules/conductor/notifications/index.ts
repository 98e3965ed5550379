/** Notifications and webhooks: `/api/notifications` (outbox, settings) and `/api/webhooks`, delivered through the job queue. */
export { notificationsFeature } from './notifications.feature.ts';
export { notificationRoutes } from './notifications.routes.ts';
export { webhookRoutes } from './webhooks.routes.ts';
export { requestNotification, type RequestedNotification } from './events.ts';
export { emitEvent, type OutboxEvent, type Emitted } from './outbox.ts';
export { EVENT_CATALOGUE, type EventType } from './catalogue.ts';
