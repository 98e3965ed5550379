import { Hono } from 'hono';
import type { AgentsEnv } from '../context.ts';
import type { AgentsFeature } from '../feature.ts';
import { memoryStoreRoutes } from './memory.routes.ts';

/** `/v1/memory_stores`: the conductor's memory stores in the shape of Claude Managed Agents' (memory.wire.ts). */
export const memoryStoresFeature: AgentsFeature = ({ conductor }) => ({ v1: new Hono<AgentsEnv>().route('/memory_stores', memoryStoreRoutes(conductor.memory)) });
