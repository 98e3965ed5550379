/**
 * RunEvent: the normalized event every runtime emits, the worker streams as NDJSON, the runner forwards and the
 * conductor stores and serves over SSE. Every stream of them ends with exactly one `result` or `error`.
 */
export type RunEventType =
  | 'progress'
  | 'session'
  | 'session_init'
  | 'assistant'
  | 'reasoning'
  | 'tool_call'
  | 'tool_output'
  | 'tool_result'
  | 'usage'
  | 'result'
  | 'error';

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
  /** assistant events carry `delta: true` while text streams; the final assistant event has the whole text. */
  delta?: boolean;
  /**
   * `reasoning` events are deltas (`message`) of the model's reasoning summary; `partId` names the summary part they
   * belong to (a new id starts a new part). `tool_output` events are output (`message`) of a running command tool
   * (`toolName`), sent by the runner while the command runs; the tool's `tool_result` still carries all of it.
   */
  partId?: string;
  ts: string;
}

export const TERMINAL_TYPES: ReadonlySet<RunEventType> = new Set(['result', 'error']);

export function isTerminal(event: Pick<RunEvent, 'type'>): boolean {
  return TERMINAL_TYPES.has(event.type);
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
 * throws gets `error` with the thrown message.
 */
export async function* withTerminal(source: AsyncIterable<RunEvent>, describe: (err: unknown) => string): AsyncGenerator<RunEvent> {
  try {
    for await (const event of source) {
      yield event;
      if (isTerminal(event)) return;
    }
  } catch (err) {
    yield runEvent('error', { message: describe(err) });
    return;
  }
  yield runEvent('error', { message: 'stream ended without a result' });
}
