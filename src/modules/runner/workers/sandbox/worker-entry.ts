import type { Server } from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunEvent } from '../../../../contracts/run-event.ts';
import { STATE_FILE, STATE_META_FILE, type StateMeta, type WorkerLease, type WorkerLeaseState } from '../../../../contracts/sandbox-worker.ts';
import type { StateBundle } from '../../../../contracts/worker.client.ts';
import type { LaunchedWorker, WorkerSubstrate } from '../../substrates/substrate.ts';
import type { Channel } from './channel.ts';
import type { CommandQueue } from './command-queue.ts';

/**
 * What the sandbox workers keep per session (sandbox-workers.ts): its worker, the run it is driving, its command queue
 * and state bundle; and what a lease shows of it (`/runner/workers/leases`).
 */
export interface ActiveRun {
  runId: string;
  channel: Channel<RunEvent>;
  cancelled: boolean;
  uploading: boolean;
  /** The run command has been handed to a poll. */
  delivered: boolean;
  /** Stops an upload in progress (the run was cancelled). */
  stopUpload?: () => void;
}

export interface Entry {
  sessionId: string;
  tenant: string;
  runtime: string;
  /** The model provider of the session's profile: the only one its worker is forwarded to. */
  provider: string | undefined;
  /** The base URL of the active run's per-run model (the /v1 agents API), reached as `/provider/override`. */
  override: string | undefined;
  substrate: WorkerSubstrate;
  dir: string;
  socketPath: string;
  server: Server | undefined;
  worker: LaunchedWorker | undefined;
  /** The worker has polled at least once: it is up. */
  polled: boolean;
  paused: boolean;
  pausing: Promise<void> | undefined;
  commands: CommandQueue;
  active: ActiveRun | undefined;
  bundle: StateBundle | undefined;
  idle: NodeJS.Timeout | undefined;
  startedAt: string;
}

export function liveState(entry: Entry): WorkerLeaseState {
  if (entry.paused) return 'paused';
  if (!entry.worker) return 'gone';
  const s = entry.substrate.state(entry.worker);
  if (s === 'unknown') return 'unknown';
  if (s === 'gone') return entry.pausing ? 'paused' : 'gone';
  return entry.polled ? 'running' : 'starting';
}

export const toLease = (entry: Entry): WorkerLease => ({
  sessionId: entry.sessionId,
  substrate: entry.substrate.id,
  workerId: entry.worker?.workerId ?? '',
  runtime: entry.runtime,
  state: liveState(entry),
  startedAt: entry.worker?.startedAt ?? entry.startedAt,
});

/** Writes a state bundle where the session's next worker starts from. */
export function writeStateToDisk(entry: Entry, bundle: StateBundle): void {
  const dir = join(entry.dir, 'state');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const meta: StateMeta = { runtime: entry.runtime, contentType: bundle.contentType, runtimeSessionId: bundle.runtimeSessionId, savedAt: new Date().toISOString() };
  writeFileSync(join(dir, STATE_FILE), bundle.bytes);
  writeFileSync(join(dir, STATE_META_FILE), JSON.stringify(meta));
}
