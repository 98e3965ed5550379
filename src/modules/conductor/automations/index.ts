/** Automations: a profile run on a cron schedule, exactly once per slot across conductors (scheduler.ts). */
export { automationsFeature } from './automations.feature.ts';
export { createScheduler, createSlotLoop, GRACE_MS, BATCH as SLOT_BATCH, type Scheduler, type SlotTick } from './scheduler.ts';
export { checkCadence, nextSlot, validTimezone, type Cadence } from './schedule.ts';
