import type { Database, Tx } from '../../../db/index.ts';
import type { Logger } from '../../../shared/log.ts';
import type { Metrics } from '../../../shared/metrics.ts';
import type { Engine } from './engine.ts';

/**
 * Durable background work on PostgreSQL (pg-boss): each job runs once across conductor replicas, failed jobs retry
 * with backoff, and queued jobs survive restarts. One instance per conductor process; features define their queues
 * and handlers before `start()` (or after, then they start at once), and send jobs, also inside their own transaction
 * (`tx`), so a job exists exactly when the caller's writes commit. Workers poll (no LISTEN connection).
 *
 * The queue (pg-boss, engine.ts) may come up after the server serves: `start({ later: true })` only opens the queue
 * to the features' `define`/`subscribe`/`schedule` (recorded), and `begin()` loads and starts it in the background.
 * A call that needs the queue before then (`send`, `publish`, `unschedule`) begins it and waits until it is up with
 * every queue recorded so far set up; nothing is dropped. A failed start fails those calls and `begin()`.
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
   * Installs or upgrades the queue's schema and works the queues defined so far, their setups side by side. With
   * `later` (the conductor's boot) it only opens the queue to the features (see above) until `begin()`.
   */
  start(opts?: { later?: boolean }): Promise<void>;
  /** Loads and starts the queue (once; later calls return the same promise): resolves when it is up, throws why not. */
  begin(): Promise<void>;
  /** For `/readyz`: whether the queue is up, and else why not ("starting", or the start's failure). */
  state(): { up: true } | { up: false; why: string };
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
/** How long the queues subscribed to an event are used without reading them again (engine.ts, queuesOf). */
export const SUBSCRIBED_MS = 5_000;
/** Attempts at bringing the queue up while the database is unreachable: 1 + 2 + 4 + 8 + 10 × 5 s of waits, about a minute. */
const START_ATTEMPTS = 9;
/** How long a stop waits: for the handlers running here (engine.ts), or for a start in progress. */
export const STOP_TIMEOUT_MS = 10_000;

/**
 * The SQL that installs the queue's schema as `start()` would on an empty database (one transaction). A new embedded
 * cluster's template gets it baked in, so the first boot's start finds the queue installed.
 */
export async function jobsSchemaSql(): Promise<string> {
  return (await import('./engine.ts')).constructionSql(JOBS_SCHEMA);
}

export function createJobs(deps: JobsDeps): Jobs {
  const ran = deps.metrics?.counter({ name: 'svc_jobs_total', help: 'Jobs this process ran, by queue and outcome', labels: ['queue', 'outcome'] });
  const defined = new Map<string, { handler: JobHandler<object>; opts: QueueSettings }>();
  const subscriptions: Array<[event: string, name: string]> = [];
  const schedules: Array<[name: string, cron: string, data: object | null, opts: { tz?: string; key?: string }]> = [];
  let started = false;
  let engine: Engine | undefined;
  /** The engine of the start in progress, if any (abandoned by a stop that could not wait for it). */
  let starting: Engine | undefined;
  let beginning: Promise<void> | undefined;
  let up = false;
  let failure: Error | undefined;
  let stopped = false;
  /** While the queue comes up: each queue's setups chained (a send waits for its queue's), and all of them. */
  const setups = new Map<string, Promise<void>>();
  let pending: Array<Promise<void>> = [];
  /** Once the engine exists: at once when up, else in the background beside the others (begin() awaits them). */
  const setUp = async (name: string, fn: (e: Engine) => Promise<void>): Promise<void> => {
    const e = engine!;
    if (up) return fn(e);
    const p = (setups.get(name) ?? Promise.resolve()).then(() => fn(e));
    setups.set(name, p.catch(() => {}));
    pending.push(p);
    p.catch(() => {}); // reported by begin()
  };

  /**
   * Loads pg-boss, starts it and sets up what was recorded. The database going away meanwhile (a restart of the
   * embedded PostgreSQL) drops that attempt and tries again, for about a minute; anything else fails at once.
   */
  async function bringUp(): Promise<void> {
    const { createEngine, isTransient } = await import('./engine.ts');
    for (let attempt = 1; ; attempt++) {
      const e = createEngine({ database: deps.database, log: deps.log, schema: JOBS_SCHEMA, pollingIntervalSeconds: deps.pollingIntervalSeconds, scheduleCheckSeconds: deps.scheduleCheckSeconds, ran: ran ? (queue, outcome) => ran.inc({ queue, outcome }) : undefined });
      starting = e;
      try {
        await setUpAll(e);
        return;
      } catch (err) {
        engine = undefined;
        pending = [];
        setups.clear();
        await e.abandon();
        if (stopped || deps.database.lost.aborted || !isTransient(err) || attempt >= START_ATTEMPTS) throw err;
        deps.log.warn('bringing the job queue up failed; trying again', { attempt, error: String(err) });
        await new Promise((resolve) => setTimeout(resolve, Math.min(500 * 2 ** attempt, 10_000)));
      }
    }
  }

  async function setUpAll(e: Engine): Promise<void> {
    await e.start();
    engine = e;
    // what was recorded so far, set up side by side (a queue's subscriptions and schedules after it)
    for (const [name, { handler, opts }] of defined) void setUp(name, (x) => x.work(name, handler, opts));
    for (const [event, name] of subscriptions) void setUp(name, (x) => x.subscribe(event, name));
    for (const [name, cron, data, opts] of schedules) void setUp(name, (x) => x.schedule(name, cron, data, opts));
    // setups recorded while these run join `pending`: wait until none is left
    while (pending.length) {
      const now = pending;
      pending = [];
      await Promise.all(now);
    }
    up = true;
    setups.clear();
  }

  function begin(): Promise<void> {
    beginning ??= bringUp().catch((err: unknown) => {
      failure = err instanceof Error ? err : new Error(String(err));
      throw failure;
    });
    return beginning;
  }
  const assertStarted = (what: string) => {
    if (!started) throw new Error(`jobs: ${what} before start()`);
  };
  /** The engine once up (begun by this call if needed), and the named queue's setup done. */
  const upFor = async (name?: string): Promise<Engine> => {
    if (!up) {
      await begin();
      const setup = name ? setups.get(name) : undefined;
      if (setup) await setup;
    }
    return engine!;
  };

  return {
    async define(name, handler, opts = {}) {
      if (defined.has(name)) throw new Error(`jobs: queue ${name} is defined twice`);
      defined.set(name, { handler: handler as JobHandler<object>, opts });
      if (engine) await setUp(name, (e) => e.work(name, handler as JobHandler<object>, opts));
    },
    async send(name, data, opts) {
      assertStarted(`send(${name})`);
      return (await upFor(name)).send(name, data, opts);
    },
    async subscribe(event, name) {
      subscriptions.push([event, name]);
      if (engine) await setUp(name, (e) => e.subscribe(event, name));
    },
    async publish(event, data, opts) {
      assertStarted(`publish(${event})`);
      return (await upFor()).publish(event, data, opts);
    },
    async schedule(name, cron, data, opts = {}) {
      assertStarted(`schedule(${name})`);
      if (!up) schedules.push([name, cron, data ?? null, opts]); // set up (again, if a start is tried again) on the way up
      if (engine) await setUp(name, (e) => e.schedule(name, cron, data ?? null, opts));
    },
    async unschedule(name, key) {
      assertStarted(`unschedule(${name})`);
      await (await upFor(name)).unschedule(name, key);
    },
    async start(opts = {}) {
      started = true;
      if (!opts.later) await begin();
    },
    begin,
    state: () => (up ? { up: true } : { up: false, why: failure ? `failed to start: ${failure.message}` : 'starting' }),
    async stop() {
      if (!started) return;
      started = false;
      stopped = true;
      if (deps.database.lost.aborted) {
        // the database is gone for good (a throwaway cluster that died): no job can be finished or handed back, so
        // the queue and any start in progress are dropped without waiting, not even for the queries they have in
        // flight: those wait on reconnect attempts (backing off to tens of seconds) until the database handle closes
        void Promise.all([...new Set([starting, engine])].map((e) => e?.abandon())).catch(() => {});
        return;
      }
      // a start still in progress (retrying while the database restarts, or stuck on a connection it lost) is waited
      // for at most STOP_TIMEOUT_MS, then dropped: a shutdown never hangs on the queue's start
      if (beginning && !up) {
        let timer: NodeJS.Timeout | undefined;
        const settled = await Promise.race([
          beginning.then(() => true, () => true),
          new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), STOP_TIMEOUT_MS))),
        ]);
        clearTimeout(timer);
        if (!settled) {
          deps.log.warn('the job queue was still starting; stopping without it');
          await starting?.abandon();
          return;
        }
      }
      if (engine) await engine.stop();
    },
  };
}
