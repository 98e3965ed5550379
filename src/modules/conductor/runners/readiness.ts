import type { Kysely } from 'kysely';
import { pingDatabase, type DB } from '../../../db/index.ts';
import { allOf, anyOf, merge, probe, type ReadyReport } from '../../../shared/readiness.ts';
import type { Fleet } from './fleet.ts';
import type { RunnerInfo } from '../../../contracts/runner.wire.ts';
import { runnerLimitsCheck } from '../sandbox-limits/index.ts';

/**
 * The conductor is ready when its database answers and at least one runner of its fleet does (each runner is asked
 * for its info with the internal token, so a runner that refuses our token counts as failed, naming the 401). It
 * asks the runners directly instead of calling `fleet.probe()`, whose restart detection belongs to the reconcile loop.
 * Each runner's check carries its sandbox limits (`detail`), and a `warning` when it enforces them only in part.
 */
export function conductorReadiness(deps: { db: Kysely<DB>; fleet: Fleet }): () => Promise<ReadyReport> {
  return async () => {
    const [database, ...runners] = await Promise.all([
      probe('database', () => pingDatabase(deps.db)),
      ...deps.fleet.members().map(async (m) => {
        let info: RunnerInfo | undefined;
        const check = await probe(`runner ${m.url}`, async () => (info = await m.client.info()));
        return check.ok ? { ...check, ...runnerLimitsCheck(info) } : check;
      }),
    ]);
    return merge([allOf([database]), anyOf('runner fleet', runners, 'no runners configured (SVC_RUNNERS)')]);
  };
}
