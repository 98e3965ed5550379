import type { ModelMessage } from 'ai';
import { badRequest } from '../../../../shared/errors.ts';
import { jsonNestsDeeperThan } from '../../../../shared/http.ts';
import { packageRequire } from '../../../../shared/package-root.ts';
import { toModelOutput } from './model-output.ts';

/**
 * Per-session conversation history of the `general` runtime: in memory and bounded, both in messages per session
 * (oldest whole turns are dropped, so a tool call never loses its result) and in sessions (least recently used go).
 */
export interface HistoryStore {
  /** A copy of the session's messages; empty for an unknown session. */
  get(sessionId: string): ModelMessage[];
  has(sessionId: string): boolean;
  /** Appends one turn's messages (the user prompt first). */
  append(sessionId: string, messages: readonly ModelMessage[]): void;
  replace(sessionId: string, messages: readonly ModelMessage[]): void;
}

export interface HistoryLimits {
  maxMessages: number;
  maxSessions: number;
}

export const DEFAULT_HISTORY_LIMITS: HistoryLimits = { maxMessages: 200, maxSessions: 1000 };

/**
 * Drops the oldest whole turns (a turn starts at a user message) until at most `max` messages remain. A single turn
 * longer than `max` is kept whole: cutting it would orphan tool results, which providers reject.
 */
export function trimTurns(messages: readonly ModelMessage[], max: number): ModelMessage[] {
  if (messages.length <= max) return [...messages];
  for (let i = 1; i < messages.length; i++) {
    if (messages[i].role === 'user' && messages.length - i <= max) return messages.slice(i);
  }
  const lastUser = messages.findLastIndex((m) => m.role === 'user');
  return messages.slice(Math.max(lastUser, 0));
}

export function createHistoryStore(limits: HistoryLimits = DEFAULT_HISTORY_LIMITS): HistoryStore {
  const sessions = new Map<string, ModelMessage[]>();
  const put = (sessionId: string, messages: ModelMessage[]) => {
    sessions.delete(sessionId); // re-insert: Map order doubles as recency
    sessions.set(sessionId, trimTurns(messages, limits.maxMessages));
    while (sessions.size > limits.maxSessions) sessions.delete(sessions.keys().next().value as string);
  };
  return {
    get: (sessionId) => [...(sessions.get(sessionId) ?? [])],
    has: (sessionId) => sessions.has(sessionId),
    append: (sessionId, messages) => put(sessionId, [...(sessions.get(sessionId) ?? []), ...messages]),
    replace: (sessionId, messages) => put(sessionId, [...messages]),
  };
}

/**
 * A JSON-safe copy of any value: circular references become the string `[circular]` (tool outputs can carry them),
 * binary data becomes base64 (a valid DataContent), URLs and dates become strings.
 */
export function toJsonSafe(value: unknown, ancestors: object[] = []): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value === null || typeof value !== 'object') return typeof value === 'function' || typeof value === 'symbol' ? undefined : value;
  if (ancestors.includes(value)) return '[circular]';
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64');
  if (value instanceof ArrayBuffer) return Buffer.from(value).toString('base64');
  if (value instanceof URL) return value.href;
  if (value instanceof Date) return value.toISOString();
  const inner = [...ancestors, value];
  if (Array.isArray(value)) return value.map((item) => toJsonSafe(item, inner) ?? null);
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const safe = toJsonSafe(item, inner);
    if (safe !== undefined) out[key] = safe;
  }
  return out;
}

export function serializeHistory(messages: readonly ModelMessage[]): string {
  return JSON.stringify(toJsonSafe(messages));
}

/**
 * How deep an imported history may nest. Tool outputs inside it are free-form JSON that no request limit has checked,
 * so this is far above the request limit, and far below where the message schema's recursion overflows the stack
 * (a few thousand levels).
 */
export const HISTORY_MAX_DEPTH = 1000;

/** The AI SDK's message schema, loaded on the first import of a bundle (the SDK is not loaded before a worker needs it). */
let schema: typeof import('ai').modelMessageSchema | undefined;
const messageSchema = () => (schema ??= (packageRequire('ai') as typeof import('ai')).modelMessageSchema);

/** Parses an exported history; anything that is not a JSON array of valid model messages is a 400 naming the problem. */
export function parseHistory(body: Uint8Array): ModelMessage[] {
  let value: unknown;
  const text = new TextDecoder().decode(body);
  if (jsonNestsDeeperThan(text, HISTORY_MAX_DEPTH)) throw badRequest(`state: JSON nested deeper than ${HISTORY_MAX_DEPTH} levels`);
  try {
    value = JSON.parse(text);
  } catch {
    throw badRequest('state: malformed JSON (expected an array of model messages)');
  }
  if (!Array.isArray(value)) throw badRequest('state: expected a JSON array of model messages');
  return value.map((item, index) => {
    const parsed = messageSchema().safeParse(item);
    if (!parsed.success) throw badRequest(`state[${index}]: not a valid model message (${parsed.error.issues[0]?.message ?? 'invalid'})`);
    return parsed.data;
  });
}

/**
 * The history of a parked turn with its pending call answered: the tool result that still holds the placeholder of
 * approval `approvalId` (runner toolkit: "… waits for approval <id> …") gets `output` (an MCP tool result) as the model
 * reads it. Undefined when no such pending call is there (nothing to resume).
 */
export function resumeHistory(messages: readonly ModelMessage[], approvalId: string, output: unknown): ModelMessage[] | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== 'tool') continue;
    const at = m.content.findIndex((p) => p.type === 'tool-result' && JSON.stringify(p.output).includes(`approval ${approvalId}`));
    if (at < 0) continue;
    const part = m.content[at]! as Extract<(typeof m.content)[number], { type: 'tool-result' }>;
    const content = [...m.content];
    content[at] = { ...part, output: toModelOutput({ output }) };
    return [...messages.slice(0, i), { ...m, content }, ...messages.slice(i + 1)];
  }
  return undefined;
}
