import { Hono } from 'hono';
import type { AgentsEnv } from '../context.ts';
import type { AgentsFeature } from '../feature.ts';
import { environmentsRoutes } from './environments.routes.ts';

/** `/v1/agents/environments…` (mounted before the sessions and agents families: it beats `/agents/{agent_id}`). */
export const environmentsFeature: AgentsFeature = ({ resources }) => ({ v1: new Hono<AgentsEnv>().route('/agents/environments', environmentsRoutes(resources)) });
