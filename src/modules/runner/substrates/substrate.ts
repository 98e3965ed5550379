import type { LimitExceeded, SandboxLimits } from '../../../contracts/sandbox-limits.ts';
import type { Runtime } from '../../../contracts/worker.ts';
import type { CheckResult } from '../../../shared/readiness.ts';
import type { SandboxMount } from '../sandbox/index.ts';
import type { CommandResult, CommandSpec } from './process/commands.ts';

/**
 * Where a sandbox session's worker runs (seed 000, "Runner info" substrates; ARCHITECTURE.md, "Sandboxes"). The
 * runner's sandbox-worker manager (workers/sandbox/) owns the protocol (commands, events, state, leases); a substrate
 * only starts, stops and reports on one worker per session. Implementations live in child folders: `process/` (a
 * worker process per session, isolated with bubblewrap) and `container/` (a container per session through the Docker
 * Engine API, Docker or Podman); Kubernetes pods would be a second backend of `container` behind the same calls (see
 * docs/sandboxes.md, "Sandbox workers").
 *
 * A worker reaches the runner only through the callback protocol: the substrate gives it a runner URL, and every
 * request to that URL arrives at the manager's callback handler for that session (`callbackSocket`).
 */
export interface WorkerLaunch {
  sessionId: string;
  /** The session's tenant: a container substrate labels what it creates with it. */
  tenant: string;
  runtime: Runtime;
  /** Profile `workerImage`: the substrate's image, template or snapshot name; the process substrate has none. */
  image?: string;
  /** The worker's whole environment (outbound-mode variables, its provider's variables); nothing of the server's. */
  env: Readonly<Record<string, string>>;
  /** The session's own writable folder on the runner's disk: the worker's home and state dir (`/var/svc` inside). */
  sessionDir: string;
  /** Unix socket on which the runner answers this session's callbacks (and forwards to its model provider). */
  callbackSocket: string;
  /** The session's files as its tools see them (`/work`, `/home`, pools), mounted where run_command sees them. */
  files: readonly SandboxMount[];
  /** The session's effective limits (contracts/sandbox-limits.ts): the worker and everything it starts are held to them. */
  limits: SandboxLimits;
}

export interface LaunchedWorker {
  workerId: string;
  /** Host pid of the worker's outermost process, when the substrate has one. */
  pid: number | undefined;
  startedAt: string;
  /** Settles when the worker has ended (for whatever reason). */
  /** `limit`: the limit that ended it (the kernel or the engine killed it for its memory, pids, CPU time…), when known. */
  exited: Promise<{ code: number | null; signal: string | null; limit?: LimitExceeded }>;
  /** The last lines the worker wrote to stderr (for the error of a worker that died before answering). */
  stderrTail(): string;
}

export interface SubstrateStatus {
  offered: boolean;
  /** Why not, or how (bubblewrap version, unisolated by the operator's choice). */
  detail: string;
}

export interface WorkerSubstrate {
  readonly id: string;
  /** Settles once the substrate knows whether it can launch workers here. */
  ready(): Promise<SubstrateStatus>;
  status(): SubstrateStatus;
  /** The base URL the worker calls the runner at, and the model provider through (`<url>/provider/<name>`). */
  runnerUrlFor(launch: Pick<WorkerLaunch, 'sessionId'>): Promise<string>;
  /** Starts a session's first worker, or a replacement for one that is gone. Throws when it cannot. */
  launch(launch: WorkerLaunch, runnerUrl: string): LaunchedWorker;
  /**
   * Puts an idle worker to rest once it has exported its state and been told to shut down: the process substrate lets
   * it exit (its state stays on `sessionDir`); a container substrate would scale the pod to zero and keep its volume.
   */
  pause(worker: LaunchedWorker, graceMs: number): Promise<void>;
  /** Brings a paused session back: a new worker on the same `sessionDir`, restoring its state before its first poll. */
  resume(launch: WorkerLaunch, runnerUrl: string): LaunchedWorker;
  /** Ends a worker now (session shut down, lease invalidated, runner closing). */
  stop(worker: LaunchedWorker): Promise<void>;
  /** Live state as the substrate sees it: running (still there), gone (ended), unknown (cannot tell). */
  state(worker: LaunchedWorker): 'running' | 'gone' | 'unknown';
  /** The session is deleted: remove what the substrate keeps for it beyond its worker (a container's state volume). */
  forget?(sessionId: string): Promise<void>;
  /**
   * Runs a session's `run_command` inside its worker (a container session's commands run in its container). Absent:
   * the runner's own command sandbox runs them.
   */
  exec?(sessionId: string, spec: CommandSpec): Promise<CommandResult>;
  /** A live check for `/readyz` (the container engine answers); absent when the substrate depends on nothing outside. */
  readiness?(): Promise<CheckResult>;
  /** Releases what the substrate holds open (connections to its engine) when the runner closes. */
  close?(): Promise<void>;
}
