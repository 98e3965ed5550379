import type { Kysely } from 'kysely';
import { pingDatabase, type DB } from '../../../db/index.ts';
import { allOf, anyOf, merge, probe, type ReadyReport } from '../../../shared/readiness.ts';
import type { Fleet } from './fleet.ts';

/**
 * The conductor is ready when its database answers and at least one runner of its fleet does (each runner is asked
 * for its info with the internal token, so a runner that refuses our token counts as failed, naming the 401). It
 * asks the runners directly instead of calling `fleet.probe()`, whose restart detection belongs to the reconcile loop.
 */
export function conductorReadiness(deps: { db: Kysely<DB>; fleet: Fleet }): () => Promise<ReadyReport> {
  return async () => {
    const [database, ...runners] = await Promise.all([
      probe('database', () => pingDatabase(deps.db)),
      ...deps.fleet.members().map((m) => probe(`runner ${m.url}`, () => m.client.info())),
    ]);
    return merge([allOf([database]), anyOf('runner fleet', runners, 'no runners configured (SVC_RUNNERS)')]);
  };
}
