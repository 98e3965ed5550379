import { Hono } from 'hono';
import type { AgentsEnv } from '../context.ts';
import type { AgentsFeature } from '../feature.ts';
import { apiModelRoutes, v1ModelRoutes } from './models.routes.ts';

/** `/v1/models` and the `/api/models…` extension routes. */
export const modelsFeature: AgentsFeature = ({ db, conductor, models, catalog }) => ({
  v1: new Hono<AgentsEnv>().route('/models', v1ModelRoutes({ db, providerKeys: conductor.providerKeys, models, catalog })),
  api: new Hono<AgentsEnv>().route('/', apiModelRoutes({ db, providerKeys: conductor.providerKeys, models, catalog })),
});
