import { Hono } from 'hono';
import type { AgentsEnv } from '../context.ts';
import type { AgentsFeature } from '../feature.ts';
import { apiModelRoutes, v1ModelRoutes } from './models.routes.ts';

/** `/v1/models` and the `/api/models…` extension routes. */
export const modelsFeature: AgentsFeature = ({ db, resources, models, catalog }) => ({
  v1: new Hono<AgentsEnv>().route('/models', v1ModelRoutes({ db, resources, models, catalog })),
  api: new Hono<AgentsEnv>().route('/', apiModelRoutes({ db, resources, models, catalog })),
});
