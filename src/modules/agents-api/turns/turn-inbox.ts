import { setTimeout as delay } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { withSystem, withTenant } from '../../../db/index.ts';
import { AppError, isAppError } from '../../../shared/errors.ts';
import { prefixedId } from '../../../shared/ids.ts';
import type { Logger } from '../../../shared/log.ts';
import type { InputEvent } from '../sessions/session.schema.ts';
import { answerHandOff, claimHandOff, deleteHandOff, insertHandOff, purgeHandOffs, readHandOff, unclaimHandOff, withdrawHandOff } from './inbox.repo.ts';

/**
 * Input events for a turn driven by another conductor replica (issue 24 item 5): the replica that received them
 * writes them to `agent_session_inbox` and NOTIFYs; every replica listens, and the one driving the session's turn
 * (it has the turn live) claims the row, applies the events as if they had been posted to it, and writes its answer
 * (nothing, or the 4xx to answer with), then NOTIFYs back. The receiving replica answers its client with that.
 *
 * A function call that a run's worker made to a replica not driving the turn (the replicas behind one Service) goes the
 * same way: the driver announces it and waits for its `tool_result`, and writes the answer for the receiving replica.
 *
 * If nobody claims the row (the turn ended, or its driver stopped, between the check and the hand-off), the receiving
 * replica applies the events itself once the turn is no longer driven elsewhere; a missed NOTIFY is repeated on each
 * tick. A request is never left hanging: after `waitMs` with its row unclaimed it is withdrawn and answered 503.
 */
export const INBOX_CHANNEL = 'svc_agent_inbox';
const ANSWER_CHANNEL = 'svc_agent_inbox_answer';

export interface Signals {
  listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>>;
  notify(channel: string, payload: string): Promise<void>;
}

/** Thrown by the engine when the session's turn is driven by another live replica: the events go through the inbox. */
export class DrivenElsewhere extends Error {}

export interface FunctionCall {
  runId: string;
  name: string;
  args: unknown;
}
export type CallAnswer = { text: string; isError: boolean };

export interface TurnInbox {
  handOff(tenantId: string, sessionId: string, events: InputEvent[]): Promise<void>;
  /** A function call for the driver of the session's turn; resolves with its answer (or "not a live turn"). */
  handOffCall(tenantId: string, sessionId: string, call: FunctionCall, signal: AbortSignal): Promise<CallAnswer>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface InboxDeps {
  db: Kysely<DB>;
  signals: Signals;
  ownerId: string;
  log: Logger;
  /** Whether this replica drives the session's turn now. */
  isLive(sessionId: string): boolean;
  /** Whether a replica (its lease owner id) is alive: a row claimed by a dead one is released for another. */
  ownerAlive(ownerId: string): Promise<boolean>;
  /** Applies events here (throws DrivenElsewhere when another replica drives the turn). */
  admitHere(tenantId: string, sessionId: string, events: InputEvent[]): Promise<void>;
  /** Announces a function call of the live turn here and waits for its answer. */
  callHere(tenantId: string, sessionId: string, runId: string, name: string, args: unknown, signal: AbortSignal): Promise<CallAnswer>;
  /** How often an unanswered hand-off is looked at again (default 500 ms). */
  tickMs?: number;
  /** How long an unclaimed hand-off waits before it is withdrawn with a 503 (default 30 s). */
  waitMs?: number;
}

type StoredError = { status: number; message: string; code?: string; extra?: Record<string, unknown>; headers?: Record<string, string> };

export function createTurnInbox(deps: InboxDeps): TurnInbox {
  const tickMs = deps.tickMs ?? 500;
  const waitMs = deps.waitMs ?? 30_000;
  const answerWaiters = new Map<string, () => void>();
  const unlisteners: Array<() => Promise<void>> = [];
  const stopping = new AbortController();

  const claim = (tenantId: string, id: string) => withTenant(deps.db, tenantId, (tx) => claimHandOff(tx, id, deps.ownerId));
  const unclaim = (tenantId: string, id: string, owner = deps.ownerId) => withTenant(deps.db, tenantId, (tx) => unclaimHandOff(tx, id, owner));
  /** A row claimed by a replica that has since stopped is released (checked once the first wait is over). */
  async function releaseIfOrphaned(tenantId: string, id: string, claimedBy: string | null, since: number): Promise<void> {
    if (!claimedBy || claimedBy === deps.ownerId || Date.now() < since) return;
    if (!(await deps.ownerAlive(claimedBy))) await unclaim(tenantId, id, claimedBy);
  }

  async function answer(tenantId: string, id: string, err: unknown): Promise<void> {
    const error: StoredError | null = err === undefined ? null : isAppError(err) ? { status: err.status, message: err.message, code: err.code, extra: err.extra, headers: err.headers } : { status: 500, message: 'applying the input failed on the conductor driving the turn' };
    if (err !== undefined && !isAppError(err)) deps.log.error('applying handed-off input failed', { id, error: String(err) });
    await withTenant(deps.db, tenantId, (tx) => answerHandOff(tx, id, { error }));
    await deps.signals.notify(ANSWER_CHANNEL, id);
  }

  /** On the driver: takes a handed-off row and applies its events to the live turn. */
  async function take(tenantId: string, sessionId: string, id: string): Promise<void> {
    if (!deps.isLive(sessionId)) return;
    const row = await claim(tenantId, id);
    if (!row) return;
    if (row.call) {
      const c = row.call as FunctionCall;
      const result = await deps.callHere(tenantId, row.session_id, c.runId, c.name, c.args, stopping.signal).catch((err): CallAnswer => {
        deps.log.warn('a handed-off function call failed', { id, error: String(err) });
        return { text: 'the function call failed on the conductor driving the turn', isError: true };
      });
      await withTenant(deps.db, tenantId, (tx) => answerHandOff(tx, id, { result }));
      return deps.signals.notify(ANSWER_CHANNEL, id);
    }
    try {
      await deps.admitHere(tenantId, row.session_id, row.events as InputEvent[]);
    } catch (err) {
      if (err instanceof DrivenElsewhere) return void (await unclaim(tenantId, id)); // not ours after all
      return answer(tenantId, id, err);
    }
    await answer(tenantId, id, undefined);
  }

  return {
    async handOff(tenantId, sessionId, events) {
      const id = prefixedId('inbox', 24);
      await withTenant(deps.db, tenantId, (tx) => insertHandOff(tx, { id, tenantId, sessionId, events }));
      const payload = JSON.stringify({ t: tenantId, s: sessionId, i: id });
      const giveUpAt = Date.now() + waitMs;
      try {
        await deps.signals.notify(INBOX_CHANNEL, payload);
        for (;;) {
          const answered = new Promise<void>((resolve) => answerWaiters.set(id, resolve));
          const row = await withTenant(deps.db, tenantId, (tx) => readHandOff(tx, id));
          if (!row) throw new AppError(404, `No session found with id '${sessionId}'.`, { code: 'not_found' });
          if (row.answered) {
            const e = row.error as StoredError | null;
            if (e) throw new AppError(e.status, e.message, { code: e.code, extra: e.extra, headers: e.headers });
            return;
          }
          await releaseIfOrphaned(tenantId, id, row.claimed_by, giveUpAt);
          if (!row.claimed_by) {
            // nobody drives the turn elsewhere any more (it ended, or its driver stopped): apply the events here
            if (await claim(tenantId, id)) {
              try {
                await deps.admitHere(tenantId, sessionId, events);
                return;
              } catch (err) {
                if (!(err instanceof DrivenElsewhere)) throw err;
                await unclaim(tenantId, id);
              }
            }
            if (Date.now() > giveUpAt) {
              if (await withTenant(deps.db, tenantId, (tx) => withdrawHandOff(tx, id))) throw new AppError(503, "the conductor driving the session's turn did not take the input; retry", { code: 'server_error' });
            }
            await deps.signals.notify(INBOX_CHANNEL, payload); // in case the driver missed it
          }
          await Promise.race([answered, delay(tickMs, undefined, { signal: stopping.signal })]).catch(() => {});
          if (stopping.signal.aborted) throw new AppError(503, 'the conductor is shutting down; retry', { code: 'server_error' });
        }
      } finally {
        answerWaiters.delete(id);
        // answered, applied here, or withdrawn: the row's work is done (a claim by the driver in flight stays)
        const row = await withTenant(deps.db, tenantId, (tx) => readHandOff(tx, id)).catch(() => undefined);
        if (row && (row.answered || row.claimed_by === deps.ownerId)) await withTenant(deps.db, tenantId, (tx) => deleteHandOff(tx, id)).catch(() => {});
      }
    },

    async handOffCall(tenantId, sessionId, call, signal) {
      const id = prefixedId('inbox', 24);
      await withTenant(deps.db, tenantId, (tx) => insertHandOff(tx, { id, tenantId, sessionId, call }));
      const payload = JSON.stringify({ t: tenantId, s: sessionId, i: id });
      const giveUpAt = Date.now() + waitMs;
      const gone = AbortSignal.any([signal, stopping.signal]);
      try {
        await deps.signals.notify(INBOX_CHANNEL, payload);
        // a claimed call waits as long as the driver keeps it (up to the turn's deadline, its tool_result, the run's end)
        while (!gone.aborted) {
          const answered = new Promise<void>((resolve) => answerWaiters.set(id, resolve));
          const row = await withTenant(deps.db, tenantId, (tx) => readHandOff(tx, id));
          if (row?.answered) return row.result as CallAnswer;
          if (row) await releaseIfOrphaned(tenantId, id, row.claimed_by, giveUpAt);
          if (!row || (!row.claimed_by && Date.now() > giveUpAt)) break;
          if (!row.claimed_by) await deps.signals.notify(INBOX_CHANNEL, payload);
          await Promise.race([answered, delay(row.claimed_by ? tickMs * 20 : tickMs, undefined, { signal: gone })]).catch(() => {});
        }
        return gone.aborted ? { text: 'the call was abandoned', isError: true } : { text: 'this function call does not belong to a live turn of the session', isError: true };
      } finally {
        answerWaiters.delete(id);
        await withTenant(deps.db, tenantId, (tx) => deleteHandOff(tx, id)).catch(() => {});
      }
    },

    async start() {
      unlisteners.push(
        await deps.signals.listen(INBOX_CHANNEL, (payload) => {
          let p: { t: string; s: string; i: string };
          try {
            p = JSON.parse(payload);
          } catch {
            return deps.log.warn('ignoring malformed inbox notification', { payload: payload.slice(0, 200) });
          }
          void take(p.t, p.s, p.i).catch((err) => deps.log.warn('taking handed-off input failed', { id: p.i, error: String(err) }));
        }),
        await deps.signals.listen(ANSWER_CHANNEL, (id) => answerWaiters.get(id)?.()),
      );
      // hand-offs whose receiving replica stopped mid-request
      await withSystem(deps.db, (q) => purgeHandOffs(q)).catch(() => {});
    },

    async stop() {
      stopping.abort();
      for (const u of unlisteners.splice(0)) await u().catch(() => {});
    },
  };
}
