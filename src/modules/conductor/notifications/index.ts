/** Notifications: `/api/notifications` (stored, queued for a delivery provider). */
export { notificationRoutes, NO_PROVIDER_DETAIL } from './notifications.routes.ts';
