import { fromKysely, getConstructionPlans, PgBoss, type Job, type JobResult, type SendOptions as BossSendOptions } from 'pg-boss';
import type { Database, Tx } from '../../../db/index.ts';
import type { Logger } from '../../../shared/log.ts';
import type { Metrics } from '../../../shared/metrics.ts';
import { poolAdapter } from './db-adapter.ts';
import { subscribedQueues } from './subscriptions.repo.ts';

/** Jobs fetched at once per worker; they run side by side (handlers of one queue are independent by contract). */
const BATCH = 10;

/**
 * Durable background work on PostgreSQL (pg-boss): each job runs once across conductor replicas, failed jobs retry
 * with backoff, and queued jobs survive restarts. One instance per conductor process; features define their queues
 * and handlers before `start()` (or after, then they start at once), and send jobs, also inside their own transaction
 * (`tx`), so a job exists exactly when the caller's writes commit. Workers poll (no LISTEN connection).
 */
export interface Jobs {
  /** Creates the queue (idempotent across replicas) and works it in this process. */
  define<T extends object>(name: string, handler: JobHandler<T>, opts?: QueueSettings): Promise<void>;
  /** Queues a job; null when a singleton or throttle slot already holds one. */
  send<T extends object>(name: string, data: T, opts?: SendOptions): Promise<string | null>;
  /** Routes an event's `publish()` to the queue `name` (durable: every replica's publishes reach it); before start, at start. */
  subscribe(event: string, name: string): Promise<void>;
  /** Queues one job on every queue subscribed to `event`; `data` may be a function, called only when some queue is. */
  publish<T extends object>(event: string, data: T | (() => Promise<T | undefined>), opts?: SendOptions & { only?: (queue: string, data: T) => boolean }): Promise<void>;
  /** A cron schedule (minute granularity) in a timezone; one job per occurrence across replicas. */
  schedule<T extends object>(name: string, cron: string, data?: T, opts?: { tz?: string; key?: string }): Promise<void>;
  unschedule(name: string, key?: string): Promise<void>;
  /**
   * Installs or upgrades the queue's schema and works the queues defined so far. With `settleLater` (the conductor's
   * boot) a boot phase begins: until `settled()`, `define`, `subscribe` and `schedule` set their queue up in the
   * background, side by side (a send to a queue, and a publish, wait for the setups), so the features' starts do not
   * queue their round trips one behind another.
   */
  start(opts?: { settleLater?: boolean }): Promise<void>;
  /** Ends the boot phase: waits for every setup since start and throws the first failure. Then each call resolves once done. */
  settled(): Promise<void>;
  /** Stops taking jobs and waits (bounded) for the handlers running here; their jobs are retried elsewhere otherwise. */
  stop(): Promise<void>;
}

export interface JobContext {
  id: string;
  /** 0 on the first attempt. */
  retryCount: number;
  signal: AbortSignal;
}

/** A handler's return value is kept as the job's output. Throwing fails the attempt (retried per the queue's settings). */
export type JobHandler<T> = (data: T, job: JobContext) => Promise<unknown> | unknown;

export interface QueueSettings {
  retryLimit?: number;
  /** Seconds before the first retry; doubled per attempt (with jitter) when `retryBackoff`. */
  retryDelay?: number;
  retryBackoff?: boolean;
  retryDelayMax?: number;
  /** An attempt still running after this long is failed (and retried). */
  expireInSeconds?: number;
  /** A job waiting longer than this is dropped. */
  retentionSeconds?: number;
  /** Finished jobs are deleted after this long. */
  deleteAfterSeconds?: number;
  /** How often an idle worker looks for jobs (>= 0.5). */
  pollingIntervalSeconds?: number;
  /** Workers of this queue in this process; each takes up to 10 jobs per fetch and runs them side by side. */
  concurrency?: number;
}

export interface SendOptions {
  /** With `singletonSeconds`: one job per key per time slot. */
  singletonKey?: string;
  singletonSeconds?: number;
  /** Seconds from now, or a time. */
  startAfter?: number | Date;
  retryLimit?: number;
  retryDelay?: number;
  retryBackoff?: boolean;
  /** Queue the job inside this transaction: it exists iff the transaction commits. */
  tx?: Tx;
}

export interface JobsDeps {
  database: Database;
  log: Logger;
  metrics?: Metrics;
  /** The default idle poll of every queue (seconds, >= 0.5). */
  pollingIntervalSeconds?: number;
  /** How often due cron occurrences are looked for and queued (seconds, 1-45; pg-boss's default is 30). */
  scheduleCheckSeconds?: number;
}

/** pg-boss's own schema in the app's database. */
export const JOBS_SCHEMA = 'pgboss';
const STOP_TIMEOUT_MS = 10_000;

/** How long the queues subscribed to an event are used without reading them again (see queuesOf). */
export const SUBSCRIBED_MS = 5_000;

/**
 * The SQL that installs the queue's schema as `start()` would on an empty database (one transaction). A new embedded
 * cluster's template gets it baked in, so the first boot's start finds the queue installed.
 */
export function jobsSchemaSql(): string {
  return getConstructionPlans(JOBS_SCHEMA);
}

export function createJobs(deps: JobsDeps): Jobs {
  const cron = deps.scheduleCheckSeconds ? { cronMonitorIntervalSeconds: deps.scheduleCheckSeconds, cronWorkerIntervalSeconds: deps.scheduleCheckSeconds } : {};
  const pool = poolAdapter(deps.database);
  const boss = new PgBoss({ db: pool, schema: JOBS_SCHEMA, migrate: true, schedule: true, supervise: true, ...cron });
  boss.on('error', (err) => deps.log.warn('job queue error', { error: String(err) }));
  // slow queries, a queue backing up, clock skew between this process and the database
  boss.on('warning', (w) => deps.log.warn('job queue warning', { message: w.message, ...(w.data ? { data: w.data } : {}) }));
  const ran = deps.metrics?.counter({ name: 'svc_jobs_total', help: 'Jobs this process ran, by queue and outcome', labels: ['queue', 'outcome'] });
  const defined = new Map<string, { handler: JobHandler<object>; opts: QueueSettings }>();
  const subscriptions: Array<[event: string, name: string]> = [];
  let started = false;
  /** Between `start({ settleLater: true })` and settled(): setups run in the background (see `settled`). */
  let booting = false;
  /** During the boot phase, each queue's setups chained (what uses a queue waits for them), and all of them. */
  const setups = new Map<string, Promise<void>>();
  let pending: Array<Promise<void>> = [];
  const setUp = async (name: string, fn: () => Promise<void>): Promise<void> => {
    if (!booting) return fn();
    const p = (setups.get(name) ?? Promise.resolve()).then(fn);
    setups.set(name, p.catch(() => {}));
    pending.push(p);
    p.catch(() => {}); // reported by settled()
  };
  async function settled(): Promise<void> {
    booting = false;
    const now = pending;
    pending = [];
    try {
      await Promise.all(now);
    } finally {
      setups.clear();
    }
  }

  async function run(name: string, handler: JobHandler<object>, job: Job<object>): Promise<JobResult> {
    try {
      const output = await handler(job.data, { id: job.id, retryCount: job.retryCount, signal: job.signal });
      ran?.inc({ queue: name, outcome: 'completed' });
      return { id: job.id, status: 'completed', output: output ?? undefined };
    } catch (err) {
      ran?.inc({ queue: name, outcome: 'failed' });
      deps.log.warn('job failed', { queue: name, jobId: job.id, attempt: job.retryCount + 1, error: String(err) });
      return { id: job.id, status: 'failed', output: { message: err instanceof Error ? err.message : String(err) } };
    }
  }

  async function work(name: string, handler: JobHandler<object>, opts: QueueSettings): Promise<void> {
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
    const queues = await subscribedQueues(db, JOBS_SCHEMA, event);
    subscribed.set(event, { queues, at: performance.now() });
    return queues;
  }

  /** A subscription written, and this process's copy of the subscribed queues dropped once it is. */
  async function subscribeNow(event: string, name: string): Promise<void> {
    await boss.subscribe(event, name);
    subscribed.clear();
  }

  const toBoss = (opts: SendOptions = {}): BossSendOptions => {
    const { tx, ...rest } = opts;
    return { ...rest, ...(tx ? { db: fromKysely(tx) } : {}) };
  };
  const assertStarted = (what: string) => {
    if (!started) throw new Error(`jobs: ${what} before start()`);
  };

  return {
    async define(name, handler, opts = {}) {
      if (defined.has(name)) throw new Error(`jobs: queue ${name} is defined twice`);
      defined.set(name, { handler: handler as JobHandler<object>, opts });
      if (started) await setUp(name, () => work(name, handler as JobHandler<object>, opts));
    },
    async send(name, data, opts) {
      assertStarted(`send(${name})`);
      const setup = setups.get(name);
      if (setup) await setup;
      return boss.send(name, data, toBoss(opts));
    },
    async subscribe(event, name) {
      subscriptions.push([event, name]);
      if (started) await setUp(name, () => subscribeNow(event, name));
    },
    async publish(event, data, opts) {
      assertStarted(`publish(${event})`);
      if (booting) await Promise.all(pending.map((p) => p.catch(() => {}))); // subscriptions being written
      // one send per subscribed queue, all on the caller's connection (see subscriptions.repo.ts)
      const options = toBoss(opts);
      const queues = await queuesOf(options.db ?? pool, event);
      if (queues.length === 0) return;
      const payload = typeof data === 'function' ? await data() : data;
      if (payload === undefined) return;
      for (const name of queues) if (!opts?.only || opts.only(name, payload)) await boss.send(name, payload, options);
    },
    async schedule(name, cron, data, opts = {}) {
      assertStarted(`schedule(${name})`);
      await setUp(name, () => boss.schedule(name, cron, data ?? null, { ...(opts.tz ? { tz: opts.tz } : {}), ...(opts.key ? { key: opts.key } : {}) }));
    },
    async unschedule(name, key) {
      assertStarted(`unschedule(${name})`);
      await boss.unschedule(name, key);
    },
    async start(opts = {}) {
      await startBoss(boss);
      started = true;
      booting = true;
      // what was defined before start, set up side by side (a subscription after its queue)
      for (const [name, { handler, opts: queue }] of defined) void setUp(name, () => work(name, handler, queue));
      for (const [event, name] of subscriptions) void setUp(name, () => subscribeNow(event, name));
      if (!opts.settleLater) await settled();
    },
    settled,
    async stop() {
      if (!started) return;
      started = false;
      await boss.stop({ graceful: true, timeout: STOP_TIMEOUT_MS, close: false });
    },
  };
}

/**
 * Starting installs or upgrades the queue's schema as the app role. Replicas booting together race to install it;
 * the loser fails on an object the winner just created and succeeds on its next attempt (starting again is safe). A
 * role that may not create schemas fails at once, with a way out instead of a bare 42501.
 */
async function startBoss(boss: PgBoss): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await boss.start();
      return;
    } catch (err) {
      if ((err as { code?: string })?.code === '42501') throw privilegeError(err);
      if (attempt >= 5) throw err;
      await new Promise((resolve) => setTimeout(resolve, 200 * 2 ** attempt));
    }
  }
}

function privilegeError(err: unknown): Error {
  return new Error(
    `the job queue cannot install its schema "${JOBS_SCHEMA}": the database role may not create schemas in this database (${String(err)}). ` +
      `Let svc's role own the database (\`svc db init --admin-url …\` sets that up) or GRANT CREATE ON DATABASE <db> TO <role>.`,
    { cause: err },
  );
}
