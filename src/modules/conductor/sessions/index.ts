/** Sessions: placement on runners, shutdown, and the read views across the fleet. */
export { sessionsFeature } from './sessions.feature.ts';
