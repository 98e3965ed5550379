/** Agent sessions, turns and their events. */
export { sessionsFeature } from './sessions.feature.ts';
