import { Hono } from 'hono';
import type { Feature } from '../feature.ts';
import type { IdentityEnv } from '../identity/index.ts';
import { notificationRoutes } from './notifications.routes.ts';

/** `/api/notifications`. */
export const notificationsFeature: Feature = ({ db }) => ({ api: new Hono<IdentityEnv>().route('/notifications', notificationRoutes({ db })) });
