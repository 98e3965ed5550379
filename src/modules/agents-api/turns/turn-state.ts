import type { SkillPayload } from '../../../contracts/worker.ts';
import type { InputContent, InputMessage } from '../sessions/session.schema.ts';
import type { SessionEventBody, SessionTurnError } from '../wire.ts';
import type { TurnTranslator } from './translate.ts';

/**
 * The in-memory state of a session's live turn, held by the conductor that drives it, and two small helpers: a
 * per-key async lock (every change to a session's turn is serialised through it) and the mapping of a run's error
 * message to a SessionTurnError code.
 */
export type ToolAnswer = { success: true; output: string | InputContent[] | null } | { success: false; error: string };

export interface PendingCall {
  callId: string;
  name: string;
  arguments: string;
  /** The turn whose run made the call: the session's own, or one of its subagents'. */
  site: CallSite;
  answer(a: ToolAnswer): void;
}

/**
 * Where a run's function and subagent calls are announced: the session's own turn, or a turn of one of its subagents
 * (whose runs reach the same function-tool endpoint). Its items go where its turn's items go.
 */
export interface CallSite {
  turnId: string;
  /** The agent whose run calls: the session's agent, or the subagent's id. */
  agentId: string;
  /** 0 for the session's own turn, 1 for its subagents', 2 for theirs… */
  depth: number;
  emit(bodies: SessionEventBody[]): void;
  translator: Pick<TurnTranslator, 'closeMessage' | 'nextOutputIndex'>;
  /** A subagent's place among the session's running subagents, given up while it waits for subagents of its own. */
  slot?: SlotHold;
}

export interface SlotHold {
  /** Gives the place up until the returned function is called (which waits for a place again). */
  pause(): (signal: AbortSignal) => Promise<void>;
}

export interface LiveTurn {
  tenantId: string;
  sessionId: string;
  turnId: string;
  agentId: string;
  translator: TurnTranslator;
  /** The run in flight; a turn runs again (same turn) for messages that joined it. */
  runId: string | undefined;
  /** Runs of the turn's subagents in flight, by run id: their function calls are announced in their own turns. */
  subRuns: Map<string, CallSite>;
  /** Messages that joined while a run was in flight: the next run of this turn takes them. */
  queued: InputMessage[];
  /** Messages that arrived while the turn was being cancelled: they start the next turn. */
  afterCancel: InputMessage[];
  pending: Map<string, PendingCall>;
  /** Calls to `always_ask` tools waiting for a decision, the turn's own or its subagents': approval id → the run and turn that called. */
  approvals: Map<string, { runId: string; turnId: string }>;
  cancelling: boolean;
  /** Stops following the run (the turn ended). */
  stop: AbortController;
  /** Item writes of this turn, in order; awaited before the turn's end is announced. */
  itemWrites: Promise<void>;
  /** Environment variables for the commands of this turn's runs (a hosted environment's `env`). */
  env?: Record<string, string>;
  /** The hosted environment's `env` and install variables, for its stdio MCP servers' `env_vars`. */
  environment?: { variables: Record<string, string>; install: Record<string, string> };
  /** The environment's skills, plugins and capability-directory skills, installed into each run. */
  skills?: SkillPayload[];
}

/** What each run of the turn (its subagents' too) carries from the environment: command variables and skills. */
export function environmentExtras(t: Pick<LiveTurn, 'env' | 'skills'>): { env?: Record<string, string>; skills?: SkillPayload[] } {
  return { ...(t.env ? { env: t.env } : {}), ...(t.skills?.length ? { skills: t.skills } : {}) };
}

export type Locked = <T>(key: string, fn: () => Promise<T>) => Promise<T>;

export function createLocks(): Locked {
  const tails = new Map<string, Promise<unknown>>();
  return async (key, fn) => {
    const previous = tails.get(key) ?? Promise.resolve();
    const run = previous.then(fn, fn);
    const tail = run.catch(() => {});
    tails.set(key, tail);
    try {
      return await run;
    } finally {
      if (tails.get(key) === tail) tails.delete(key);
    }
  };
}

/** A run's error message as a SessionTurnError (§2.1 code list). */
export function turnError(message: string, known?: string): SessionTurnError {
  if (known) return { code: known as SessionTurnError['code'], message };
  const code =
    /HTTP 429|rate limit/i.test(message) ? 'rate_limit_exceeded'
    : /HTTP 40[13]|key is set|_API_KEY is not set|authentication/i.test(message) ? 'authentication_error'
    : /context length|maximum context/i.test(message) ? 'context_length_exceeded'
    : /HTTP 4\d\d/.test(message) ? 'invalid_request'
    : /HTTP 5\d\d|overloaded/i.test(message) ? 'server_error'
    : /no live runner|unavailable|ECONNREFUSED|fetch failed|runner stream broke|worker/i.test(message) ? 'connection_failed'
    : /timed? ?out/i.test(message) ? 'request_timeout'
    : 'internal_error';
  return { code, message };
}

/** What the model reads back from a function call's answer. */
export function answerText(a: ToolAnswer): { text: string; isError: boolean } {
  if (!a.success) return { text: a.error, isError: true };
  if (a.output === null) return { text: 'null', isError: false };
  if (typeof a.output === 'string') return { text: a.output, isError: false };
  return { text: a.output.map((c) => (c.type === 'input_text' ? c.text : `[image: ${c.image_url}]`)).join('\n'), isError: false };
}
