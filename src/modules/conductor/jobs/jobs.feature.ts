import type { Feature } from '../feature.ts';

/**
 * The job queue's lifecycle: started before the features after it in the list (which define, send and schedule
 * jobs; a queue defined after the start starts at once), stopped after them.
 */
export const jobsFeature: Feature = ({ jobs }) => ({
  start: () => jobs.start(),
  stop: () => jobs.stop(),
});
