import { Hono } from 'hono';
import type { AgentsEnv } from '../context.ts';
import type { AgentsFeature } from '../feature.ts';
import { filesRoutes } from './files.routes.ts';

/** `/v1/files`. */
export const filesFeature: AgentsFeature = ({ resources }) => ({ v1: new Hono<AgentsEnv>().route('/files', filesRoutes(resources)) });
