import { fromKysely, getConstructionPlans, PgBoss, type Job, type JobResult, type SendOptions as BossSendOptions } from 'pg-boss';
import type { Logger } from '../../../shared/log.ts';
import { decodeValue, encodeValue, sendWithNext, type Database } from '../../../db/index.ts';
import { poolAdapter } from './db-adapter.ts';
import { subscribedQueues } from './subscriptions.repo.ts';
import { STOP_TIMEOUT_MS, SUBSCRIBED_MS, type JobHandler, type QueueSettings, type SendOptions } from './jobs.ts';

/**
 * pg-boss behind the job queue (jobs.ts), in a module of its own: the conductor loads it (about 1.1 MB of bundled
 * code) once the server serves, or at the first call that needs it, never on the boot's path.
 */

/** Jobs fetched at once per worker; they run side by side (handlers of one queue are independent by contract). */
const BATCH = 10;

export interface EngineDeps {
  database: Database;
  log: Logger;
  schema: string;
  pollingIntervalSeconds?: number;
  scheduleCheckSeconds?: number;
  /** Called once per job run here. */
  ran?: (queue: string, outcome: 'completed' | 'failed') => void;
}

export type Engine = ReturnType<typeof createEngine>;

export function constructionSql(schema: string): string {
  return getConstructionPlans(schema);
}

export function createEngine(deps: EngineDeps) {
  const cron = deps.scheduleCheckSeconds ? { cronMonitorIntervalSeconds: deps.scheduleCheckSeconds, cronWorkerIntervalSeconds: deps.scheduleCheckSeconds } : {};
  const pool = poolAdapter(deps.database);
  const boss = new PgBoss({ db: pool, schema: deps.schema, migrate: true, schedule: true, supervise: true, ...cron });
  // once the database is gone for good (Database.lost) every poll fails until the server has stopped: not news
  boss.on('error', (err) => deps.database.lost.aborted || deps.log.warn('job queue error', { error: String(err) }));
  // slow queries, a queue backing up, clock skew between this process and the database
  boss.on('warning', (w) => deps.log.warn('job queue warning', { message: w.message, ...(w.data ? { data: w.data } : {}) }));

  // pg-boss writes a job's data and output as JSON text of its own making, which the statement encoding cannot see
  // into (a NUL would reach jsonb as `\u0000`): their strings go in the storage encoding before pg-boss sees them,
  // and come back out of it before a handler does (an automation's last error may hold whatever a command printed).
  async function run(name: string, handler: JobHandler<object>, job: Job<object>): Promise<JobResult> {
    try {
      const output = await handler(decodeValue(job.data), { id: job.id, retryCount: job.retryCount, signal: job.signal });
      deps.ran?.(name, 'completed');
      return { id: job.id, status: 'completed', output: encodeValue(output ?? undefined) };
    } catch (err) {
      deps.ran?.(name, 'failed');
      deps.log.warn('job failed', { queue: name, jobId: job.id, attempt: job.retryCount + 1, error: String(err) });
      return { id: job.id, status: 'failed', output: encodeValue({ message: err instanceof Error ? err.message : String(err) }) };
    }
  }

  /**
   * The queues subscribed to an event, read at most every SUBSCRIBED_MS per event (a run's end publishes one: the read
   * was a statement and a round trip inside every run-end transaction). Subscriptions are made at start by the same
   * features on every replica and never removed; a queue another replica subscribes (a rolling deploy adding a
   * subscriber) gets this process's events from at most SUBSCRIBED_MS later. A subscribe here clears it.
   */
  const subscribed = new Map<string, { queues: string[]; at: number }>();
  async function queuesOf(db: Parameters<typeof subscribedQueues>[0], event: string): Promise<string[]> {
    const hit = subscribed.get(event);
    if (hit && performance.now() - hit.at < SUBSCRIBED_MS) return hit.queues;
    const queues = await subscribedQueues(db, deps.schema, event);
    subscribed.set(event, { queues, at: performance.now() });
    return queues;
  }

  const toBoss = (opts: SendOptions = {}): BossSendOptions => {
    const { tx, ...rest } = opts;
    return { ...rest, ...(tx ? { db: fromKysely(tx) } : {}) };
  };

  return {
    /**
     * Installs or upgrades the queue's schema as the app role. Replicas booting together race to install it; the
     * loser fails on an object the winner just created and succeeds on its next attempt (starting again is safe). A
     * role that may not create schemas fails at once, with a way out instead of a bare 42501.
     */
    async start(): Promise<void> {
      for (let attempt = 1; ; attempt++) {
        try {
          await boss.start();
          return;
        } catch (err) {
          if ((err as { code?: string })?.code === '42501') throw privilegeError(deps.schema, err);
          if (attempt >= 5) throw err;
          deps.log.warn('starting the job queue failed; retrying', { attempt, error: String(err) });
          await new Promise((resolve) => setTimeout(resolve, 200 * 2 ** attempt));
        }
      }
    },
    async work(name: string, handler: JobHandler<object>, opts: QueueSettings): Promise<void> {
      const { pollingIntervalSeconds, concurrency, ...queue } = opts;
      await boss.createQueue(name, queue);
      // Up to BATCH jobs per fetch, each completed or failed (and retried) on its own; while fetches come back full the
      // worker fetches again at once, so a backlog (every run that ended in a burst) drains without a poll interval
      // between jobs. An idle queue is still polled at the interval.
      await boss.work<object>(
        name,
        {
          pollingIntervalSeconds: pollingIntervalSeconds ?? deps.pollingIntervalSeconds ?? 2,
          batchSize: BATCH,
          burstWhenBatchFull: true,
          perJobResults: true,
          localConcurrency: concurrency ?? 1,
        },
        async (jobs: Job<object>[]) => Promise.all(jobs.map((job) => run(name, handler, job))),
      );
    },
    /** A subscription written, and this process's copy of the subscribed queues dropped once it is. */
    async subscribe(event: string, name: string): Promise<void> {
      await boss.subscribe(event, name);
      subscribed.clear();
    },
    schedule: (name: string, cron: string, data: object | null, opts: { tz?: string; key?: string }) =>
      boss.schedule(name, cron, encodeValue(data), { ...(opts.tz ? { tz: opts.tz } : {}), ...(opts.key ? { key: opts.key } : {}) }),
    unschedule: (name: string, key?: string) => boss.unschedule(name, key),
    send: (name: string, data: object, opts?: SendOptions) => boss.send(name, encodeValue(data), toBoss(opts)),
    async publish<T extends object>(event: string, data: T | (() => Promise<T | undefined>), opts?: SendOptions & { only?: (queue: string, data: T) => boolean }): Promise<void> {
      // one send per subscribed queue, all on the caller's connection (see subscriptions.repo.ts)
      const options = toBoss(opts);
      const queues = await queuesOf(options.db ?? pool, event);
      if (queues.length === 0) return;
      const payload = typeof data === 'function' ? await (data as () => Promise<T | undefined>)() : data;
      if (payload === undefined) return;
      const stored = encodeValue(payload);
      for (const name of queues) {
        if (opts?.only && !opts.only(name, payload)) continue;
        // in a caller's transaction, the job's insert goes in one write with the transaction's next statement: a
        // published job's id is never read (pg-boss answers null for it), and an insert that fails fails that statement
        if (opts?.tx) await sendWithNext(opts.tx);
        await boss.send(name, stored, options);
      }
    },
    stop: () => boss.stop({ graceful: true, timeout: STOP_TIMEOUT_MS, close: false }),
    /** Drops a start that failed half way (its workers and timers), without waiting for anything. */
    abandon: () => boss.stop({ graceful: false, close: false }).catch(() => {}),
  };
}

/**
 * Errors worth bringing the queue up again for: the database unreachable or restarting (the embedded postmaster is
 * brought back by its supervisor), a serialization failure. A missing privilege or a bad setup is not.
 */
export function isTransient(err: unknown): boolean {
  const code = String((err as { code?: unknown })?.code ?? '');
  return /^(08|57P0[123]|40001$|40P01$)/.test(code) || /^(ECONNREFUSED|ECONNRESET|ENOENT|EPIPE|ETIMEDOUT|CONNECTION_(CLOSED|ENDED|DESTROYED)|CONNECT_TIMEOUT)$/.test(code);
}

function privilegeError(schema: string, err: unknown): Error {
  return new Error(
    `the job queue cannot install its schema "${schema}": the database role may not create schemas in this database (${String(err)}). ` +
      `Let svc's role own the database (\`svc db init --admin-url …\` sets that up) or GRANT CREATE ON DATABASE <db> TO <role>.`,
    { cause: err },
  );
}
