import { Hono } from 'hono';
import type { Feature } from '../feature.ts';
import type { IdentityEnv } from '../identity/index.ts';
import { memoryRoutes, mountRoutes } from './memory.routes.ts';
import { PURGE_QUEUE, purgeOldVersions } from './purge.ts';

/**
 * Memory stores: `/api/memory-stores` (people and the memory tools), `/api/memory-mounts` (a run's own view), and the
 * hourly purge of versions past their retention.
 */
export const memoryFeature: Feature = ({ db, jobs, config }) => {
  const deps = { db, config: config.memory };
  return {
    api: new Hono<IdentityEnv>().route('/memory-stores', memoryRoutes(deps)).route('/memory-mounts', mountRoutes(deps)),
    async start() {
      await jobs.define(PURGE_QUEUE, async () => ({ purged: await purgeOldVersions(deps, new Date()) }), { retryLimit: 0 });
      await jobs.schedule(PURGE_QUEUE, '23 * * * *');
    },
  };
};
