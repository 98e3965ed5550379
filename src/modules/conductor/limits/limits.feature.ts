import type { Feature } from '../feature.ts';
import { purgeExpiredLimits } from './limiter.ts';

/** The shared limiter's upkeep: expired rate-limit windows go every ten minutes, once across replicas. */
export const limitsFeature: Feature = ({ db, jobs }) => ({
  async start() {
    await jobs.define('limits.purge', async () => ({ purged: await purgeExpiredLimits(db) }), { retryLimit: 0 });
    await jobs.schedule('limits.purge', '*/10 * * * *');
  },
});
