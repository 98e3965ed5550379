import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { withTenant } from '../../../db/index.ts';
import { randomId } from '../../../shared/ids.ts';
import type { InputEvent } from '../sessions/session.schema.ts';
import { getSessionRow, updateTurn } from '../sessions/sessions.repo.ts';
import type { TurnIo } from './turn-io.ts';
import type { CallSite, LiveTurn, ToolAnswer } from './turn-state.ts';

/**
 * Client-executed function calls of a live turn (spec §8.5-8.7), made by the session's own runs or by its subagents'
 * (`site`: the turn whose run called; its items and `turn_id` are that turn's). `announce` registers the call with
 * the live turn before anything is emitted (a client may answer as soon as it sees `turn.item.added`), then announces
 * it, lists it in `required_actions` and moves the session to `requires_action`; `answer` records one `tool_result`,
 * and when the session waits on nothing more, moves it back to `in_progress`. Both run under the session's lock.
 */
export type ToolResultEvent = Extract<InputEvent, { type: 'agent.session.input.tool_result' }>;

/** Resolves once announced; `answered` settles with the client's answer (wrapped, so the lock is not held for it). */
export async function announceCall(db: Kysely<DB>, io: TurnIo, t: LiveTurn, site: CallSite, name: string, args: unknown): Promise<{ callId: string; answered: Promise<ToolAnswer> }> {
  const callId = `call_${randomId(24)}`;
  const argsText = typeof args === 'string' ? args : JSON.stringify(args ?? {});
  let settle!: (a: ToolAnswer) => void;
  const answered = new Promise<ToolAnswer>((resolve) => (settle = resolve));
  t.pending.set(callId, { callId, name, arguments: argsText, site, answer: settle });
  site.emit(site.translator.closeMessage());
  const outputIndex = site.translator.nextOutputIndex();
  const item = { type: 'function_call', id: `fc_${randomId(24)}`, call_id: callId, name, arguments: argsText, status: 'in_progress', turn_id: site.turnId };
  const base = { session_id: t.sessionId, turn_id: site.turnId };
  site.emit([
    { type: 'agent.session.turn.item.added', ...base, item, output_index: outputIndex },
    { type: 'agent.session.turn.item.done', ...base, item: { ...item, status: 'completed' }, output_index: outputIndex },
  ]);
  const row = await withTenant(db, t.tenantId, (tx) => getSessionRow(tx, t.sessionId));
  const actions = [...(row?.required_actions ?? []), { type: 'function_call' as const, name, call_id: callId, arguments: argsText, turn_id: site.turnId }];
  await withTenant(db, t.tenantId, (tx) => updateTurn(tx, site.turnId, { status: 'waiting' }));
  const waiting = await io.patchSession(t.tenantId, t.sessionId, { status: 'requires_action', required_actions: actions });
  if (waiting) io.emit(t, [io.snapshot('agent.session.requires_action', waiting)]);
  return { callId, answered };
}

/** Records the answer to a registered call (the caller checked it is pending) and hands it to the waiting model. */
export async function answerCall(db: Kysely<DB>, io: TurnIo, t: LiveTurn, ev: ToolResultEvent): Promise<void> {
  const call = t.pending.get(ev.call_id)!;
  const site = call.site;
  t.pending.delete(ev.call_id);
  const a: ToolAnswer = ev.success ? { success: true, output: ev.output ?? null } : { success: false, error: ev.error ?? 'the tool failed' };
  const item = {
    type: 'function_call_output',
    id: `fco_${randomId(24)}`,
    call_id: ev.call_id,
    output: a.success ? a.output : null,
    error: a.success ? null : a.error,
    status: a.success ? 'completed' : 'failed',
    turn_id: site.turnId,
  };
  site.emit([{ type: 'agent.session.turn.item.added', session_id: t.sessionId, turn_id: site.turnId, item, output_index: null }]);
  const row = await withTenant(db, t.tenantId, (tx) => getSessionRow(tx, t.sessionId));
  const actions = (row?.required_actions ?? []).filter((r) => !(r.type === 'function_call' && r.call_id === ev.call_id));
  // the calling turn goes on once it waits on nothing more; the session, once none of its turns does
  const turnWaits = [...t.pending.values()].some((p) => p.site.turnId === site.turnId) || [...t.approvals.values()].some((a) => a.turnId === site.turnId);
  if (!turnWaits) await withTenant(db, t.tenantId, (tx) => updateTurn(tx, site.turnId, { status: 'in_progress' }));
  // (a call waiting for an approval keeps it `requires_action`: tool-approvals.ts)
  if (t.pending.size === 0 && t.approvals.size === 0) {
    const resumed = await io.patchSession(t.tenantId, t.sessionId, { status: 'in_progress', required_actions: actions });
    if (resumed) io.emit(t, [io.snapshot('agent.session.in_progress', resumed)]);
  } else await io.patchSession(t.tenantId, t.sessionId, { required_actions: actions });
  call.answer(a);
}
