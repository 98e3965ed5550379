import type { Tx } from '../../../db/index.ts';
import type { Logger } from '../../../shared/log.ts';
import type { Jobs } from '../jobs/index.ts';
import { readRunFinished } from './run-finished.repo.ts';

/**
 * Run hooks: what billing, automations, workflows and publishing metrics attach to a run's life without the runs
 * feature knowing them.
 *
 * `runFinished` is emitted once per run, by the transaction that moves the run out of `running` (the driver's end,
 * a cancel, a force-terminate, the orphan sweep), as a job queued in that same transaction: it exists exactly when the
 * end is durable, and a process dying right after the commit loses nothing. Each subscriber has its own queue, so one
 * that fails is retried with backoff on its own, and the others are not called again. Delivery is at least once (a
 * process can die between a handler's success and its record): subscribers are idempotent by `runId`.
 *
 * `gate` is a pre-run check (billing's credit check): the run service calls the gates before it creates anything,
 * and a gate refuses by throwing (an AppError 402 for "payment required").
 */
export interface RunFinished {
  runId: string;
  tenantId: string;
  profile: string;
  sessionId: string;
  /** The delegating run of a sub-run. */
  parentId: string | null;
  status: 'ok' | 'error' | 'cancelled' | 'interrupted';
  startedAt: string;
  finishedAt: string;
  /** Tokens from the run's `usage` events (what was logged by the end: a cancelled run's tail may be missing). */
  usage: { input: number; output: number; cacheRead: number; cacheWrite: number };
  /** What a price is computed from; null on runs from before cost inputs were recorded. */
  cost: { model: string | null; runtime: string | null; keySource: 'platform' | 'tenant' | null };
  /** The feature that started the run (`automation`, `workflow`), or null for a run asked for through the API. */
  origin: string | null;
}

export interface RunGateContext {
  tenantId: string;
  profile: string;
  parentId: string | null;
  /** The session resumed, or null for a new one. */
  sessionId: string | null;
  runtime: string;
  model: string | null;
  keySource: 'platform' | 'tenant';
}

export type RunFinishedHandler = (event: RunFinished) => Promise<void> | void;

/** A run as the transaction that creates it records it (with its session, when that is new). */
export interface RunRecorded {
  tenantId: string;
  runId: string;
  sessionId: string;
  profile: string;
  parentId: string | null;
  origin: string | null;
  /** The run's session was created with it. */
  newSession: boolean;
}
/**
 * Writes inside the caller's transaction (the webhook outbox): throwing rolls back what it reports. `ahead`: what the
 * listener's `readAhead` answered, when the caller read ahead (RunHooks.readAhead); otherwise the listener reads itself.
 */
export type RunRecordedListener = (tx: Tx, run: RunRecorded, ahead?: unknown) => Promise<void>;
export type RunEndingListener = (tx: Tx, tenantId: string, runId: string, ahead?: unknown) => Promise<void>;
/** A listener's read, started in `tx` to ride with its next statement (tenant.ts readWithNext); its answer is the listener's `ahead`. */
export type ReadAhead = (tx: Tx, tenantId: string) => Promise<unknown>;
/** The listeners' reads ahead (RunHooks.readAhead), for runRecorded or runFinished. */
export type Ahead = ReadonlyMap<object, unknown>;
/** `ahead`: what the gate's readAhead answered, when the caller read ahead (RunHooks.readAhead); else the gate reads. */
export type RunGate = (ctx: RunGateContext, ahead?: unknown) => Promise<void> | void;

export interface RunHooks {
  /**
   * Subscribes `fn` under a stable `name` (its queue, shared by every replica: lowercase letters, digits, hyphens).
   * Register before the conductor starts its queue; later registrations start at once (await them). `origins`: only
   * runs started by these features reach `fn` (no job is queued for the others).
   */
  onRunFinished(name: string, fn: RunFinishedHandler, opts?: { origins?: readonly string[] }): Promise<void>;
  gate(fn: RunGate, opts?: { readAhead?: ReadAhead }): void;
  /**
   * The run service, before creating a run: every gate in registration order; the first to throw refuses the run.
   * `ahead`: the gates' reads ahead (readAhead 'start').
   */
  checkGates(ctx: RunGateContext, ahead?: Ahead): Promise<void>;
  /**
   * Whatever ended the run, inside the transaction that ended it. `known.facts`: the run's facts as that transaction's
   * statement ending it returned them (runs.repo.ts endRunning), so they are not read again; `known.ahead`: the ending
   * listeners' reads ahead, started earlier in that transaction.
   */
  runFinished(tx: Tx, tenantId: string, runId: string, known?: { facts?: RunFinished; ahead?: Ahead }): Promise<void>;
  /**
   * Listeners called inside the transaction that creates a run (`runRecorded`, by the run service) or ends it (every
   * `runFinished`), for what must be written with it: the webhook outbox. Register before the conductor serves.
   */
  onRunRecorded(fn: RunRecordedListener, opts?: { readAhead?: ReadAhead }): void;
  onRunEnding(fn: RunEndingListener, opts?: { readAhead?: ReadAhead }): void;
  /**
   * Starts in `tx` the reads the gates and the listeners of a run's creation (`start`) or its end (`end`) want, each
   * held to go in one write with the transaction's next statement (no round trip of their own): the caller passes the
   * result to checkGates and runRecorded, or runFinished, after that statement (creation reads ahead with the run's
   * profile, before the gates and the transaction recording the run; a run's end at the start of its own).
   */
  readAhead(tx: Tx, tenantId: string, kind: 'start' | 'end'): Promise<Ahead>;
  /** The run service, inside the transaction that inserts the run. */
  runRecorded(tx: Tx, run: RunRecorded, ahead?: Ahead): Promise<void>;
}

export const RUN_FINISHED = 'run.finished';

export function createRunHooks(deps: { jobs: Jobs; log: Logger }): RunHooks {
  const gates: RunGate[] = [];
  const recorded: RunRecordedListener[] = [];
  const ending: RunEndingListener[] = [];
  const readsAhead = { start: new Map<object, ReadAhead>(), end: new Map<object, ReadAhead>() };
  /** Subscribers that take only some origins, by queue (every replica registers the same ones: they are code). */
  const originsOf = new Map<string, readonly string[]>();
  return {
    async onRunFinished(name, fn, opts = {}) {
      if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(name)) throw new Error(`onRunFinished: invalid subscriber name "${name}"`);
      const queue = `hooks.run-finished.${name}`;
      if (opts.origins) originsOf.set(queue, opts.origins);
      await deps.jobs.define<RunFinished>(queue, (event) => fn(event), {
        retryLimit: 12, // with backoff from 1 s to 10 min: about an hour of retries
        retryDelay: 1,
        retryBackoff: true,
        retryDelayMax: 600,
        deleteAfterSeconds: 86_400,
      });
      await deps.jobs.subscribe(RUN_FINISHED, queue);
    },
    gate(fn, opts = {}) {
      gates.push(fn);
      if (opts.readAhead) readsAhead.start.set(fn, opts.readAhead);
    },
    async checkGates(ctx, ahead) {
      for (const gate of gates) await gate(ctx, ahead?.get(gate));
    },
    async runFinished(tx, tenantId, runId, known = {}) {
      // the run's facts are read only when someone subscribes (no subscriber: one lookup per ended run)
      await deps.jobs.publish(RUN_FINISHED, known.facts ?? (() => readRunFinished(tx, tenantId, runId)), {
        tx,
        only: (queue, event) => {
          const origins = originsOf.get(queue);
          return !origins || (event.origin !== null && origins.includes(event.origin));
        },
      });
      for (const fn of ending) await fn(tx, tenantId, runId, known.ahead?.get(fn));
    },
    onRunRecorded(fn, opts = {}) {
      recorded.push(fn);
      if (opts.readAhead) readsAhead.start.set(fn, opts.readAhead);
    },
    onRunEnding(fn, opts = {}) {
      ending.push(fn);
      if (opts.readAhead) readsAhead.end.set(fn, opts.readAhead);
    },
    async readAhead(tx, tenantId, kind) {
      const ahead = new Map<object, unknown>();
      for (const [fn, read] of readsAhead[kind]) ahead.set(fn, await read(tx, tenantId));
      return ahead;
    },
    async runRecorded(tx, run, ahead) {
      for (const fn of recorded) await fn(tx, run, ahead?.get(fn));
    },
  };
}
