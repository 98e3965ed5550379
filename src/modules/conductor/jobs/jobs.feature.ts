import type { Feature } from '../feature.ts';

/**
 * The job queue's lifecycle: started before the features after it in the list (which define, send and schedule
 * jobs; a queue defined after the start starts at once), stopped after them.
 */
export const jobsFeature: Feature = ({ jobs }) => ({
  // the features after it set their queues up side by side; the conductor awaits jobs.settled() after their starts
  start: () => jobs.start({ settleLater: true }),
  stop: () => jobs.stop(),
});
