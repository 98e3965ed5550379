/** Notifications: `/api/notifications` (outbox, settings), delivered by email and signed webhooks through the job queue. */
export { notificationsFeature } from './notifications.feature.ts';
export { notificationRoutes } from './notifications.routes.ts';
export { requestNotification, type RequestedNotification } from './events.ts';
