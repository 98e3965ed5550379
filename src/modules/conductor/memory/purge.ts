import { withSystem } from '../../../db/index.ts';
import { purgeVersions } from './entries.repo.ts';
import type { MemoryDeps } from './entries.service.ts';

/** The job that keeps versions for SVC_MEMORY_VERSION_DAYS after they were replaced: hourly, once across replicas. */
export const PURGE_QUEUE = 'memory.purge-versions';

/** Deletes what the retention no longer keeps as of `now`; returns how many versions went. */
export function purgeOldVersions(deps: MemoryDeps, now: Date): Promise<number> {
  const before = new Date(now.getTime() - deps.config.versionDays * 86_400_000);
  return withSystem(deps.db, (tx) => purgeVersions(tx, before));
}
