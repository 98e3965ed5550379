/** Notifications: `/api/notifications` (stored, queued for a delivery provider). */
export { notificationsFeature } from './notifications.feature.ts';
export { notificationRoutes, NO_PROVIDER_DETAIL } from './notifications.routes.ts';
