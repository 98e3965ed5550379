import { Hono } from 'hono';
import type { Feature } from '../feature.ts';
import type { IdentityEnv } from '../identity/index.ts';
import { automationRoutes } from './automations.routes.ts';
import { AUTOMATION_ORIGIN, onRunFinished } from './firing.service.ts';
import { createScheduler } from './scheduler.ts';

/**
 * `/api/automations/*` (and the `/api/schedules/*` alias), the scheduler every conductor runs (exactly once per slot
 * across replicas: scheduler.ts) and the `automations` runFinished subscriber that records each firing's outcome.
 */
export const automationsFeature: Feature = ({ db, runs, hooks, jobs, log, config }) => {
  const deps = { db, runs: runs.deps, jobs, log: log.child('automations'), memory: config.memory };
  const scheduler = createScheduler(deps);
  return {
    api: new Hono<IdentityEnv>().route('/automations', automationRoutes(deps, { prefix: 'automations' })).route('/schedules', automationRoutes(deps, { prefix: 'schedules' })),
    start: () => hooks.onRunFinished('automations', async (ev) => void (await onRunFinished(deps, ev)), { origins: [AUTOMATION_ORIGIN] }),
    serving: () => scheduler.start(),
    drain: () => scheduler.stop(),
  };
};
