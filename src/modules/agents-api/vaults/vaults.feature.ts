import { Hono } from 'hono';
import type { AgentsEnv } from '../context.ts';
import type { AgentsFeature } from '../feature.ts';
import { vaultsRoutes } from './vaults.routes.ts';

/** `/v1/vaults`. */
export const vaultsFeature: AgentsFeature = ({ resources }) => ({ v1: new Hono<AgentsEnv>().route('/vaults', vaultsRoutes(resources)) });
