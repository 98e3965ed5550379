/** Runs: creation, listing, cancel, the SSE stream, and the machinery that drives them (hub, event log, lease). */
export { runsFeature } from './runs.feature.ts';
export { createRunServices, type RunServices } from './run-services.ts';
export { createRun } from './runs.service.ts';
export { followRun } from './follow.ts';
export { cancelRun } from './cancel.ts';
export { shownStatus, waitingOf } from './runs.repo.ts';
export type { StoredEvent } from './hub.ts';
