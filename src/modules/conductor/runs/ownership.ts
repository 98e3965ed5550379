import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { withSystem } from '../../../db/index.ts';
import { runEvent } from '../../../contracts/run-event.ts';
import type { Logger } from '../../../shared/log.ts';
import type { Hub } from './hub.ts';
import { dropLease, insertTerminalEvent, interruptRun, pruneLeases, releaseInterruptedSession, renewLease } from './leases.repo.ts';
import { lastSeq, orphanedRuns } from './runs.repo.ts';

/**
 * Run ownership across conductor replicas. Each conductor holds a heartbeat lease; runs whose owner's lease expired
 * are orphans, and any live conductor ends them `interrupted` with a terminal event, so their streams close. At boot a
 * conductor also ends the runs recorded under its own id: it cannot be driving them, it just started.
 */
export interface Ownership {
  start(): Promise<void>;
  /** One sweep; returns the ids of the runs it interrupted. */
  sweep(includeOwn: boolean): Promise<string[]>;
  stop(): Promise<void>;
}

export function createOwnership(deps: { db: Kysely<DB>; hub: Hub; ownerId: string; ttlMs: number; log: Logger }): Ownership {
  let timer: NodeJS.Timeout | undefined;
  let beating: Promise<void> | undefined;
  let sweeping: Promise<void> | undefined;

  async function heartbeat(): Promise<void> {
    await renewLease(deps.db, deps.ownerId, deps.ttlMs);
  }

  async function sweep(includeOwn: boolean): Promise<string[]> {
    const announced: Array<{ tenantId: string; runId: string; seq: number }> = [];
    const ids = await withSystem(deps.db, async (tx) => {
      const orphans = await orphanedRuns(tx, deps.ownerId, includeOwn);
      for (const run of orphans) {
        // system scope: row security does not narrow the run ids, which are unique per tenant only
        if (!(await interruptRun(tx, run.tenant_id, run.id))) continue;
        const seq = (await lastSeq(tx, run.tenant_id, run.id)) + 1;
        const event = runEvent('error', { message: 'run interrupted: the conductor driving it stopped' });
        await insertTerminalEvent(tx, run.tenant_id, run.id, seq, event);
        await releaseInterruptedSession(tx, run.session_id);
        announced.push({ tenantId: run.tenant_id, runId: run.id, seq });
      }
      await pruneLeases(tx);
      return announced.map((a) => a.runId);
    });
    if (announced.length) {
      deps.log.warn('interrupted orphaned runs', { runs: ids });
      await deps.hub.announce(announced).catch(() => {});
    }
    return ids;
  }

  return {
    async start() {
      await heartbeat();
      await sweep(true);
      timer = setInterval(() => {
        // Two independent chains: the heartbeat is this replica's sign of life and must never wait behind a slow sweep
        // (a sweep under load can take longer than the lease lasts, and the others would then take our runs).
        beating ??= heartbeat()
          .catch((err) => deps.log.warn('lease heartbeat failed', { error: String(err) }))
          .finally(() => (beating = undefined));
        sweeping ??= sweep(false)
          .then(() => undefined)
          .catch((err) => deps.log.warn('orphaned-run sweep failed', { error: String(err) }))
          .finally(() => (sweeping = undefined));
      }, Math.max(100, Math.floor(deps.ttlMs / 3)));
      timer.unref();
    },
    sweep,
    async stop() {
      clearInterval(timer);
      await Promise.all([beating, sweeping]);
      await dropLease(deps.db, deps.ownerId).catch(() => {});
    },
  };
}
