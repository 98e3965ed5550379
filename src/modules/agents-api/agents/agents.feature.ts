import { Hono } from 'hono';
import type { AgentsEnv } from '../context.ts';
import type { AgentsFeature } from '../feature.ts';
import { agentRoutes } from './agents.routes.ts';

/** `/v1/agents`. */
export const agentsFeature: AgentsFeature = ({ db, models, settings }) => ({ v1: new Hono<AgentsEnv>().route('/agents', agentRoutes({ db, models, privateAddresses: settings.privateAddresses })) });
