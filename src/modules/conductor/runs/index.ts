/** Runs: creation, listing, cancel, the SSE stream, and the machinery that drives them (hub, event log, lease). */
export { runsFeature } from './runs.feature.ts';
export { createRunServices, type RunServices } from './run-services.ts';
