import { Hono } from 'hono';
import type { AgentsEnv } from '../context.ts';
import type { AgentsFeature } from '../feature.ts';
import { skillsRoutes } from './skills.routes.ts';

/** `/v1/skills`. */
export const skillsFeature: AgentsFeature = ({ resources }) => ({ v1: new Hono<AgentsEnv>().route('/skills', skillsRoutes(resources)) });
