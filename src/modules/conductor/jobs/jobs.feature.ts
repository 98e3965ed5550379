import type { Feature } from '../feature.ts';

/**
 * The job queue's lifecycle: opened before the features after it in the list (which define, subscribe and schedule
 * their queues, recorded), brought up once the server serves (the conductor's `serving()` begins it; a send or
 * publish before then begins it and waits), stopped after them.
 */
export const jobsFeature: Feature = ({ jobs }) => ({
  start: () => jobs.start({ later: true }),
  stop: () => jobs.stop(),
});
