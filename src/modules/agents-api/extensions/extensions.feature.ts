import { Hono } from 'hono';
import type { AgentsEnv } from '../context.ts';
import type { AgentsFeature } from '../feature.ts';
import { keysRoutes } from './keys.routes.ts';
import { providersRoutes } from './providers.routes.ts';
import { usageRoutes } from './usage.routes.ts';

/** `/api/providers…`, `/api/keys…` and `/api/usage…` (camelCase JSON, `{"error": …}` errors). */
export const extensionsFeature: AgentsFeature = ({ conductor, settings }) => ({
  api: new Hono<AgentsEnv>().route('/', providersRoutes(conductor.providerKeys, settings.serverKeys)).route('/', keysRoutes(conductor.keys)).route('/', usageRoutes(conductor.runs)),
});
