import type { Kysely } from 'kysely';
import type { Database, DB } from '../../../db/index.ts';
import { withTenant } from '../../../db/index.ts';
import type { Logger } from '../../../shared/log.ts';
import type { Metrics } from '../../../shared/metrics.ts';
import type { Fleet } from '../runners/fleet.ts';
import { createActiveRuns, newActiveRun, type ActiveRuns } from './active-runs.ts';
import { adoptRun } from './driver.ts';
import { stopLocally } from './cancel.ts';
import { createEventLog, type EventLog } from './event-log.ts';
import { createHub, type Hub } from './hub.ts';
import { createOwnership, type Ownership } from './ownership.ts';
import { eventsAfter } from './runs.repo.ts';
import { startIdleQueues, startNextQueued } from './multitask.ts';
import type { RunDeps } from './runs.service.ts';
import type { Jobs } from '../jobs/index.ts';
import type { PrivateAddresses } from '../../../shared/egress/index.ts';
import type { RunHooks } from '../hooks/index.ts';
import type { ProviderKeys } from '../provider-keys/index.ts';

/**
 * The run machinery every feature shares: the live hub (LISTEN/NOTIFY across replicas), the batched event log, the
 * runs this process drives and its ownership lease. Built once by the conductor's core; the runs feature starts and
 * stops it.
 */
export interface RunServices {
  /** What the run and session services take (`createRun(runs.deps, …)`). */
  deps: RunDeps & { hub: Hub };
  /** At a graceful stop: this conductor starts no more queued runs (the queue waits for the next one, multitask.ts). */
  pauseQueue(): void;
  hub: Hub;
  eventLog: EventLog;
  active: ActiveRuns;
  ownership: Ownership;
}

export function createRunServices(opts: {
  database: Database;
  db: Kysely<DB>;
  fleet: Fleet;
  log: Logger;
  metrics: Metrics;
  ownerId: string;
  leaseTtlMs: number;
  /** How long a failing event-log write is retried before its runs end with an error (default 30 s). */
  runWriteRetryMs?: number;
  mintRunToken: (tenantId: string, runId: string) => Promise<string>;
  /** SVC_PRIVATE_ADDRESSES: whether tenants' MCP servers may be on internal addresses (default allow). */
  privateAddresses?: PrivateAddresses;
  jobs: Jobs;
  hooks: RunHooks;
  providerKeys: ProviderKeys;
}): RunServices {
  const { database, db, fleet, log, metrics, ownerId } = opts;
  const active = createActiveRuns();
  const hub = createHub({
    database,
    log: log.child('hub'),
    fetchAfter: (tenantId, runId, after) => withTenant(db, tenantId, (tx) => eventsAfter(tx, runId, after)),
    isDrivenHere: (tenantId, runId) => active.get(tenantId, runId) !== undefined,
  });
  const eventLog = createEventLog({ db, hub, log: log.child('events'), giveUpMs: opts.runWriteRetryMs, databaseLost: database.lost });
  const { jobs, hooks } = opts;
  let queuePaused = false;
  const deps: RunDeps & { hub: Hub } = {
    db, fleet, log, metrics, hub, eventLog, active, hooks, jobs, ownerId, mintRunToken: opts.mintRunToken, privateAddresses: opts.privateAddresses, providerKeys: opts.providerKeys, databaseLost: database.lost,
    queuePaused: () => queuePaused,
    onSessionFree: (tenantId, sessionId, queued) => void startNextQueued(deps, tenantId, sessionId, queued).catch((err) => log.warn('starting a session queue failed', { sessionId, error: String(err) })),
  };
  hub.onCancelRequest((tenantId, runId) => void stopLocally(deps, tenantId, runId));
  const ownership = createOwnership({
    db,
    hub,
    jobs,
    hooks,
    ownerId,
    ttlMs: opts.leaseTtlMs,
    log: log.child('ownership'),
    fleet,
    adopt: ({ tenantId, runId, sessionId, runner, stored, offset }) => {
      const run = newActiveRun(tenantId, runId, sessionId, stored);
      active.add(run);
      run.done = adoptRun(deps, run, runner, stored, offset).catch((err) => log.error('adopted run driver failed', { runId, error: String(err) }));
    },
    startQueues: () => startIdleQueues(deps),
    databaseLost: database.lost,
  });
  return { deps, hub, eventLog, active, ownership, pauseQueue: () => void (queuePaused = true) };
}
