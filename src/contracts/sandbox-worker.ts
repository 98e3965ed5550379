import type { WorkerRunRequest } from './worker.ts';

/**
 * The sandbox worker callback protocol, version 1 (seed 000, "Sandbox worker callback API" and "Agent-worker API",
 * outbound client mode): a worker launched for one session long-polls the runner for commands, streams a run's events
 * back as NDJSON and uploads its state bundle. Every request carries `Authorization: Bearer <SVC_WORKER_TOKEN>`.
 */
export const WORKER_PROTOCOL = 1;
export const WORKER_PROTOCOL_HEADER = 'X-Svc-Worker-Protocol';
export const RUN_ID_HEADER = 'X-Svc-Run-Id';

export type WorkerCommand =
  | { protocol: 1; command: 'run'; runId: string; run: WorkerRunRequest }
  | { protocol: 1; command: 'export_state' }
  | { protocol: 1; command: 'shutdown' };

/** Seed 000, "Sandbox worker lease": `state` is read live from the substrate. */
export type WorkerLeaseState = 'starting' | 'running' | 'paused' | 'gone' | 'unknown';

export interface WorkerLease {
  sessionId: string;
  substrate: string;
  workerId: string;
  runtime: string;
  state: WorkerLeaseState;
  startedAt: string;
}

/** Limits of one event upload (seed 000, "Limits"). */
export const EVENT_LINE_LIMIT_BYTES = 4 * 1024 * 1024;
export const EVENT_UPLOAD_LIMIT_BYTES = 256 * 1024 * 1024;
export const EVENT_UPLOAD_MAX_MS = 4 * 3_600_000;
/** Worker tokens live 24 hours; the MCP query token of a run without a deadline 2 hours. */
export const WORKER_TOKEN_TTL_MS = 24 * 3_600_000;

export function callbackPaths(sessionId: string) {
  const base = `/worker/sessions/${encodeURIComponent(sessionId)}`;
  return { nextRun: `${base}/next-run`, events: `${base}/events`, state: `${base}/state` };
}

/**
 * A worker's state on disk (SVC_STATE_DIR): the runtime's opaque bundle and what it is. The worker writes it after
 * each run and on `export_state`, and reads it back before its first poll; the runner writes it when it hydrates a
 * sandbox session, so the next worker starts from that bundle.
 */
export const STATE_FILE = 'bundle';
export const STATE_META_FILE = 'bundle.json';
export interface StateMeta {
  runtime: string;
  contentType: string;
  runtimeSessionId: string;
  savedAt: string;
}
