import type { HeldDecision, ParkedResume } from '../../../contracts/approvals.ts';
import { APPROVAL_HOLD_MAX_S } from '../../../contracts/approvals.ts';
import type { RunCallbacksClient } from '../../../contracts/run-callbacks.client.ts';
import { runEvent, type RunEvent } from '../../../contracts/run-event.ts';
import { CallError } from '../../../contracts/http-client.ts';
import { describeError } from '../../../shared/errors.ts';
import { createLogger } from '../../../shared/log.ts';
import type { SessionRecord, SessionStore } from '../sessions/sessions.store.ts';

/**
 * The runner's side of approvals (contracts/approvals.ts): a toolkit call under an `ask` policy asks the conductor to
 * record a pending approval, and only then shows `approval_required` in the run. Then either:
 *
 * - PARKED (a parkable run: `general`, started by its conductor with `parkable`): the call answers at once with a
 *   result marked PARKED_MARK and the session remembers it (`session.parked`); the `general` runtime ends its turn
 *   on that result with the call pending in its conversation, and the run's stream here ends with `parked` instead
 *   of its result (runs/runs.service.ts). The conductor saves the session's state and resumes the run on a decision
 *   (conductor runs/parking.ts, where the whole design is written); `resumed` tells that run what to show and answer.
 *   One call per run parks: another `ask` call of the same run while one is parked is refused.
 * - HELD (any other run): held here until the conductor delivers the decision (`deliver`), the run ends, or the
 *   approval's end passes with no word from the conductor (then it counts as expired, a minute after `expiresAt`, so
 *   the conductor's own expiry normally comes first), at most APPROVAL_HOLD_MAX_S. Held in memory: a runner that
 *   restarts loses its held calls, and their runs end with it.
 */
export interface Approvals {
  /**
   * Waits for a person's decision on the call (held); never throws for a refusal, answers it. With `park`, a call of
   * a parkable run (`session.parkable`) parks instead and answers `{parked}` at once: only a toolkit call, which the
   * runner can run itself on resume (runs/runs.service.ts), may park.
   */
  ask(session: SessionRecord, toolName: string, input: unknown, signal: AbortSignal): Promise<HeldOutcome>;
  ask(session: SessionRecord, toolName: string, input: unknown, signal: AbortSignal, opts: { park: boolean }): Promise<Outcome>;
  /** The conductor's decision for a held call; false when no call of the tenant's session waits on it. */
  deliver(tenant: string, sessionId: string, approvalId: string, decision: HeldDecision): boolean;
  /** Calls held now (diagnostics). */
  held(): number;
}

export type HeldOutcome = { approved: true; input: unknown } | { approved: false; reason: string };
export type Outcome = HeldOutcome | { parked: string };

interface Held {
  tenant: string;
  sessionId: string;
  resolve(d: HeldDecision): void;
}

/** After `expiresAt`, how long the runner still waits for the conductor's expiry before it ends the wait itself. */
const GRACE_MS = 60_000;
/** How long a decision that came before its call waits for it. */
const EARLY_MS = 120_000;
const log = createLogger('runner:approvals');

export function createApprovals(deps: { conductor: RunCallbacksClient | undefined; sessions: Pick<SessionStore, 'find'> }): Approvals {
  const waiting = new Map<string, Held>();
  /**
   * Decisions that arrived before their call began to wait: the row exists (and is listed) a moment before the call
   * that asked for it registers here, so a quick decision may win that race. Kept briefly, for a session with a run.
   */
  const early = new Map<string, { tenant: string; sessionId: string; decision: HeldDecision; at: number }>();

  return {
    held: () => waiting.size,
    deliver(tenant, sessionId, approvalId, decision) {
      const held = waiting.get(approvalId);
      if (held && held.tenant === tenant && held.sessionId === sessionId) {
        held.resolve(decision);
        return true;
      }
      const session = deps.sessions.find(tenant, sessionId);
      // the call parked: its conductor sees this decision when it marks the run parked, and resumes it (runs/parking.ts)
      if (!held && session?.parked?.approvalId === approvalId) return true;
      if (held || session?.status !== 'running') return false;
      const now = Date.now();
      for (const [id, e] of early) if (now - e.at > EARLY_MS) early.delete(id);
      if (early.size >= 1000) return false;
      early.set(approvalId, { tenant, sessionId, decision, at: now });
      return true;
    },
    // one implementation behind both signatures: without `park` it never answers `{parked}`
    ask: (async (session: SessionRecord, toolName: string, input: unknown, signal: AbortSignal, opts: { park?: boolean } = {}): Promise<Outcome> => {
      if (!deps.conductor || !session.runToken) return { approved: false, reason: 'it needs approval, and no conductor is there to ask (the call was not made by a run)' };
      if (opts.park && session.parkable && session.parked) return { approved: false, reason: `it needs approval, and another call of this run (${session.parked.toolName}) already waits for one; call it again once that one is decided` };
      const park = opts.park === true && session.parkable === true;
      const toolCallId = claimToolCall(session, toolName);
      let ticket;
      try {
        ticket = await deps.conductor.requestApproval(session.runToken, { toolName, input, ...(toolCallId ? { toolCallId } : {}), ...(park ? { park } : {}) }, signal);
      } catch (err) {
        // the conductor refusing it (a published agent's end users cannot approve): its reason is the model's
        if (err instanceof CallError && err.status === 403) return { approved: false, reason: err.message.slice(err.message.indexOf(': ') + 2) };
        log.warn('recording an approval failed', { sessionId: session.id, tool: toolName, error: describeError(err) });
        return { approved: false, reason: `it needs approval, and the approval could not be recorded (${describeError(err)})` };
      }
      const { approvalId, expiresAt } = ticket;
      // the row exists now: only then is the event shown
      session.runOutput?.(runEvent('approval_required', { approvalId, toolCallId, toolName, input, expiresAt }));
      if (park) {
        session.parked = { approvalId, ...(toolCallId ? { toolCallId } : {}), toolName, input };
        return { parked: approvalId };
      }
      const waitMs = Math.min(Math.max(0, Date.parse(expiresAt) - Date.now()) + GRACE_MS, (APPROVAL_HOLD_MAX_S + 120) * 1000);
      const decision = await new Promise<HeldDecision>((resolve) => {
        const done = (d: HeldDecision) => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          waiting.delete(approvalId);
          resolve(d);
        };
        const timer = setTimeout(() => done({ decision: 'deny', reason: 'expired' }), waitMs);
        const onAbort = () => done({ decision: 'deny', reason: 'cancelled' });
        signal.addEventListener('abort', onAbort, { once: true });
        waiting.set(approvalId, { tenant: session.tenant, sessionId: session.id, resolve: done });
        const first = early.get(approvalId);
        early.delete(approvalId);
        if (signal.aborted) onAbort();
        else if (first && first.tenant === session.tenant && first.sessionId === session.id) done(first.decision);
      });
      if (signal.aborted) return { approved: false, reason: 'the run ended while it waited for approval' };
      const settled = resumed({ approvalId, ...(toolCallId ? { toolCallId } : {}), toolName, input, decision });
      session.runOutput?.(settled.event);
      return settled.outcome;
    }) as Approvals['ask'],
  };
}

/** A decided call: the `approval_decided` event its run shows, and what the call does (held, or parked and resumed). */
export function resumed(r: ParkedResume): { event: RunEvent; outcome: HeldOutcome } {
  const { decision, approvalId, toolCallId, toolName } = r;
  const edited = decision.decision === 'approve' && decision.input !== undefined;
  const event = runEvent('approval_decided', {
    approvalId, toolCallId, toolName, decision: decision.decision,
    ...(decision.decision === 'deny' ? { reason: decision.reason ?? 'denied' } : {}),
    ...(decision.message ? { message: decision.message } : {}),
    ...(edited ? { input: decision.input } : {}),
  });
  if (decision.decision === 'approve') return { event, outcome: { approved: true, input: edited ? decision.input : r.input } };
  const reason = decision.reason === 'expired' ? 'the approval expired' : decision.reason === 'cancelled' ? 'the approval was cancelled' : `a person denied it${decision.message ? `: ${decision.message}` : ''}`;
  return { event, outcome: { approved: false, reason } };
}

/** The model's id of this call: the oldest `tool_call` of that tool the run showed that no approval has claimed yet. */
function claimToolCall(session: SessionRecord, toolName: string): string | undefined {
  const calls = session.toolCalls ?? [];
  const at = calls.findIndex((c) => c.name === toolName);
  if (at < 0) return undefined;
  return calls.splice(at, 1)[0]!.id;
}
