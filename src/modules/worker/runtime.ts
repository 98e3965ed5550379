import type { RunEvent } from '../../contracts/run-event.ts';
import type { Runtime, WorkerRunRequest } from '../../contracts/worker.ts';

/**
 * The contract every worker runtime implements (`general`, `runtime_a`, `runtime_b`); the server dispatches to it by
 * profile.runtime and never looks inside. Implementations live in `runtimes/<name>/`.
 */
export interface WorkerRuntime {
  readonly id: Runtime;
  /**
   * Runs one turn. The server wraps the events with `withTerminal`, so a runtime may simply throw; aborting `signal`
   * (client disconnect, worker shutdown) must stop the model call.
   */
  run(request: WorkerRunRequest, signal: AbortSignal): AsyncIterable<RunEvent>;
  /** The session's state bundle, or undefined when there is nothing to export. */
  exportState(sessionId: string): Promise<StateBundle | undefined>;
  /**
   * Replaces the session's state with a bundle. Client-caused problems throw a 400 AppError and must leave the
   * session untouched (not seeded).
   */
  importState(sessionId: string, body: Uint8Array): Promise<void>;
  close(): Promise<void>;
}

export interface StateBundle {
  contentType: string;
  runtimeSessionId: string;
  body: Uint8Array | string;
}
