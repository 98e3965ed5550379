import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { withSystem } from '../../../db/index.ts';
import { runEvent } from '../../../contracts/run-event.ts';
import type { Logger } from '../../../shared/log.ts';
import type { Jobs } from '../jobs/index.ts';
import type { RunHooks } from '../hooks/index.ts';
import type { Hub } from './hub.ts';
import type { Fleet, FleetMember } from '../runners/fleet.ts';
import { claimRun, dropLease, insertTerminalEvent, interruptRun, pruneLeases, releaseInterruptedSession, renewLease } from './leases.repo.ts';
import { firstEventType, lastSeq, orphanedRuns } from './runs.repo.ts';

/**
 * Run ownership across conductor replicas. Each conductor holds a heartbeat lease; runs whose owner's lease expired
 * are orphans. A sweep adopts each orphan whose runner this conductor knows: it takes the run over in the database
 * and re-attaches to it on the runner after the last stored event (driver.ts adoptRun), so the run completes. Only an
 * orphan without a known runner is ended `interrupted` here, with a terminal event, so its streams close. The sweep is a job
 * on the queue, one per time slot of a third of the lease: every live replica offers the slot's job, the queue keeps
 * one, and one replica runs it (pg-boss's own cron counts in minutes, too coarse for a lease of seconds). At boot a
 * conductor also ends the runs recorded under its own id, directly: it cannot be driving them, it just started.
 */
export interface Ownership {
  start(): Promise<void>;
  /** One sweep; returns the ids of the runs it interrupted (runs it adopted are driven on, not listed). */
  sweep(includeOwn: boolean): Promise<string[]>;
  stop(): Promise<void>;
}

export const SWEEP_QUEUE = 'runs.orphan-sweep';

/** An orphan this conductor took over: drive it from the event after `stored` on `runner`. */
export interface Adopted {
  tenantId: string;
  runId: string;
  sessionId: string;
  runner: FleetMember;
  stored: number;
  /** Events the log holds before the runner's own: 1 for a run that waited in a queue (its `queued` event). */
  offset: number;
}

export function createOwnership(deps: {
  db: Kysely<DB>;
  hub: Hub;
  jobs: Jobs;
  hooks: RunHooks;
  ownerId: string;
  ttlMs: number;
  log: Logger;
  fleet: Fleet;
  adopt(run: Adopted): void;
  /** Starts the queued runs of sessions nothing runs on (multitask.ts); answers how many queues it looked at. */
  startQueues?(): Promise<number>;
  /** Aborted once the database is gone for good (Database.lost): the lease went with it, a stop waits for nothing. */
  databaseLost?: AbortSignal;
}): Ownership {
  let timer: NodeJS.Timeout | undefined;
  let beating: Promise<void> | undefined;
  let offering: Promise<void> | undefined;
  const tickMs = Math.max(100, Math.floor(deps.ttlMs / 3));
  const slotSeconds = Math.max(1, Math.round(tickMs / 1000));

  async function heartbeat(): Promise<void> {
    await renewLease(deps.db, deps.ownerId, deps.ttlMs);
  }

  async function sweep(includeOwn: boolean): Promise<string[]> {
    const announced: Array<{ tenantId: string; runId: string; seq: number }> = [];
    const adopted: Adopted[] = [];
    const ids = await withSystem(deps.db, async (tx) => {
      const orphans = await orphanedRuns(tx, deps.ownerId, includeOwn);
      for (const run of orphans) {
        const runner = run.runner_url ? deps.fleet.byUrl(run.runner_url) : undefined;
        if (runner) {
          if (!(await claimRun(tx, run.tenant_id, run.id, run.owner_id, deps.ownerId))) continue;
          // the runner counts from 1 again after a queued run's `queued` event, or a resumed run's events so far
          const offset = run.resumed_from || ((await firstEventType(tx, run.tenant_id, run.id)) === 'queued' ? 1 : 0);
          adopted.push({ tenantId: run.tenant_id, runId: run.id, sessionId: run.session_id, runner, stored: await lastSeq(tx, run.tenant_id, run.id), offset });
          continue;
        }
        // system scope: row security does not narrow the run ids, which are unique per tenant only
        if (!(await interruptRun(tx, run.tenant_id, run.id))) continue;
        const seq = (await lastSeq(tx, run.tenant_id, run.id)) + 1;
        const event = runEvent('error', { message: 'run interrupted: the conductor driving it stopped' });
        await insertTerminalEvent(tx, run.tenant_id, run.id, seq, event);
        await deps.hooks.runFinished(tx, run.tenant_id, run.id);
        await releaseInterruptedSession(tx, run.session_id);
        announced.push({ tenantId: run.tenant_id, runId: run.id, seq });
      }
      await pruneLeases(tx);
      return announced.map((a) => a.runId);
    });
    // driven once the takeover is committed; a runner that no longer has the run ends it `interrupted` (driver.ts)
    for (const run of adopted) deps.adopt(run);
    if (adopted.length) deps.log.warn('adopted orphaned runs', { runs: adopted.map((r) => r.runId) });
    // their terminal events reach other replicas through the insert's trigger (NOTIFY at commit)
    if (announced.length) deps.log.warn('interrupted orphaned runs', { runs: ids });
    // a queue whose session freed while no conductor was up to start its next run (or whose run was just interrupted)
    await deps.startQueues?.().catch((err) => deps.log.warn('starting session queues failed', { error: String(err) }));
    return ids;
  }

  /** Queues this slot's sweep unless a replica already did (the throttle slot holds one job). */
  async function offerSweep(): Promise<void> {
    await deps.jobs.send(SWEEP_QUEUE, {}, { singletonKey: 'sweep', singletonSeconds: slotSeconds });
  }

  return {
    async start() {
      await deps.jobs.define(SWEEP_QUEUE, async () => ({ sweptBy: deps.ownerId, interrupted: await sweep(false) }), {
        retryLimit: 0, // the next slot sweeps again
        expireInSeconds: Math.max(60, slotSeconds * 4),
        retentionSeconds: Math.max(60, slotSeconds * 4), // a slot's job nobody took in time is stale: a later one exists
        deleteAfterSeconds: 3600,
        pollingIntervalSeconds: Math.max(0.5, slotSeconds / 2),
      });
      await heartbeat();
      await sweep(true);
      timer = setInterval(() => {
        // Two independent chains: the heartbeat is this replica's sign of life and must never wait behind a slow queue
        // (the others would then take our runs).
        beating ??= heartbeat()
          .catch((err) => deps.log.warn('lease heartbeat failed', { error: String(err) }))
          .finally(() => (beating = undefined));
        offering ??= offerSweep()
          .catch((err) => deps.log.warn('queueing the orphaned-run sweep failed', { error: String(err) }))
          .finally(() => (offering = undefined));
      }, tickMs);
      timer.unref();
    },
    sweep,
    async stop() {
      clearInterval(timer);
      // a heartbeat in flight to a lost database waits on reconnect attempts backing off to tens of seconds: not for that
      if (deps.databaseLost?.aborted) return;
      await Promise.all([beating, offering]);
      await dropLease(deps.db, deps.ownerId).catch(() => {});
    },
  };
}
