/** Automations: a profile run on a cron schedule, exactly once per slot across conductors (scheduler.ts). */
export { automationsFeature } from './automations.feature.ts';
export { createScheduler, GRACE_MS, type Scheduler } from './scheduler.ts';
