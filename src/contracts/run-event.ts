import type { LimitExceeded } from './sandbox-limits.ts';

/**
 * RunEvent: the normalized event every runtime emits, the worker streams as NDJSON, the runner forwards and the
 * conductor stores and serves over SSE. Every stream of them ends with exactly one `result` or `error`.
 */
export type RunEventType =
  /** The first event of a run posted to a busy session with `multitask` `enqueue` or `interrupt`, while it waits. */
  | 'queued'
  | 'progress'
  | 'session'
  | 'session_init'
  | 'assistant'
  | 'thinking'
  | 'tool_call'
  | 'tool_output'
  | 'tool_result'
  | 'usage'
  | 'capability_decision'
  | 'capability_context_savings'
  | 'capability_span'
  | 'limit_exceeded'
  | 'approval_required'
  | 'approval_decided'
  /**
   * Between a runner and its conductor only, never stored or shown: the run's last event on the runner when a tool
   * call of it waits for approval and the run is parked (conductor runs/parking.ts). The run is not over.
   */
  | 'parked'
  | 'result'
  | 'error';

/**
 * The `general` runtime's dynamic tool loading (worker runtimes/general/toolset.ts): past 32 tools the model is offered
 * only the meta-tools `search_tools` and `call_tool`. `capability_decision` says so once at the start of a run,
 * `capability_context_savings` what the catalog's definitions would have cost in the model's context, and each
 * `call_tool` that ran is one `capability_span`, right after its `tool_result`.
 */
export interface CapabilityDecision {
  strategy: 'dynamic';
  reason: string;
  /** Tools the run could use (after the profile's allowlist). */
  catalogSize: number;
  /** Up to this many tools are offered to the model directly. */
  threshold: number;
  /** What the model is offered instead. */
  offered: string[];
}

export interface CapabilityContextSavings {
  catalogTools: number;
  /** JSON bytes of every tool's name, description and input schema: what offering them directly would send. */
  catalogSchemaBytes: number;
  /** JSON bytes of the meta-tools' definitions, sent instead. */
  offeredSchemaBytes: number;
  savedBytes: number;
  /** savedBytes / 4, rounded up: an estimate, tokenizers differ. */
  estimatedTokensSaved: number;
}

export interface CapabilitySpan {
  /** The `call_tool` call this span measures. */
  toolCallId: string;
  /** The tool it loaded and called (as the model named it). */
  tool: string;
  /** False when no tool of the catalog has that name. */
  found: boolean;
  startedAt: string;
  durationMs: number;
  isError: boolean;
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens?: number;
  cacheCreateTokens?: number;
}

export interface RunEvent {
  type: RunEventType;
  message?: string;
  runtimeSessionId?: string;
  toolCallId?: string;
  toolName?: string;
  input?: unknown;
  output?: unknown;
  isError?: boolean;
  usage?: Usage;
  /**
   * assistant events carry `delta: true` while text streams; the final assistant event has the whole text. A delta may
   * hold several of the model's chunks (the `general` runtime joins those of one event-loop turn).
   */
  delta?: boolean;
  /**
   * `thinking` events are deltas (`message`) of the model's reasoning summary; `partId` names the summary part they
   * belong to (a new id starts a new part). `tool_output` events are output (`message`) of a running command tool
   * (`toolName`), sent by the runner while the command runs; the tool's `tool_result` still carries all of it.
   */
  partId?: string;
  /** A `queued` event: the run's place in its session's queue (1: next). */
  position?: number;
  /**
   * Why: on a terminal event of a run stopped for a reason of its own, `interrupted` (a newer run on its session
   * interrupted it); on `approval_decided`, a denial's reason (`denied`, `expired`, …).
   */
  reason?: string;
  /** The payload of a `capability_decision`, `capability_context_savings` or `capability_span` event. */
  capability?: CapabilityDecision | CapabilityContextSavings | CapabilitySpan;
  /**
   * A `limit_exceeded` event: a sandbox limit tripped (contracts/sandbox-limits.ts) in a command, a stdio MCP server,
   * an environment setup command or the session's sandbox worker; `message` says it (`memory limit 512 MiB reached:
   * killed`). The run goes on (the tool's result is an error naming the limit) unless the worker itself was killed.
   */
  limit?: LimitExceeded;
  /**
   * `approval_required` (a tool under an `ask` policy waits for a person; its row is stored before the event) and
   * `approval_decided` carry the approval's id; `expiresAt` when it stops waiting; the decision (`approve` or `deny`),
   * and for a denial its `reason` (`denied`, `expired`, …). `message` is the decider's note, `input` the tool's input
   * (edited, when the decider changed it).
   */
  approvalId?: string;
  expiresAt?: string;
  decision?: 'approve' | 'deny';
  ts: string;
}

/**
 * Events as written before a rename, read back under today's name: the model's reasoning was `reasoning` until it
 * became `thinking` (seed 000, variant B). Applied where events enter the conductor (a runner's stream, the stored
 * log), so runs stored before, and runners not yet upgraded, replay under the new name.
 */
export function currentEvent<E extends { type: string }>(event: E): E {
  return event.type === 'reasoning' ? { ...event, type: 'thinking' } : event;
}

export const TERMINAL_TYPES: ReadonlySet<RunEventType> = new Set(['result', 'error']);

export function isTerminal(event: Pick<RunEvent, 'type'>): boolean {
  return TERMINAL_TYPES.has(event.type);
}

/** The last event a runner sends for a run: its terminal event, or `parked` (the run goes on later, elsewhere). */
export function endsRunnerStream(event: Pick<RunEvent, 'type'>): boolean {
  return TERMINAL_TYPES.has(event.type) || event.type === 'parked';
}

export function runEvent(type: RunEventType, fields: Omit<Partial<RunEvent>, 'type' | 'ts'> = {}): RunEvent {
  return { type, ...fields, ts: isoNow() };
}

/** The current time as ISO 8601, formatted once per millisecond: a run streams many deltas within one. */
let lastMs = NaN;
let lastIso = '';
function isoNow(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}

/**
 * Wraps any event source so that it ends with exactly one terminal event: events after the first terminal are
 * dropped, a source that ends without one gets `error` (`stream ended without a result`), and a source that
 * throws gets `error` with the thrown message. A runner's stream may end with `parked` instead (the run goes on later).
 */
export async function* withTerminal(source: AsyncIterable<RunEvent>, describe: (err: unknown) => string): AsyncGenerator<RunEvent> {
  try {
    for await (const event of source) {
      yield event;
      if (endsRunnerStream(event)) return;
    }
  } catch (err) {
    yield runEvent('error', { message: describe(err) });
    return;
  }
  yield runEvent('error', { message: 'stream ended without a result' });
}
