import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { withTenant } from '../../../db/index.ts';
import type { RunEvent } from '../../../contracts/run-event.ts';
import { getSessionRow, updateTurn } from '../sessions/sessions.repo.ts';
import type { RequiredAction } from '../wire.ts';
import type { TurnIo } from './turn-io.ts';
import type { LiveTurn } from './turn-state.ts';

/**
 * Calls to `always_ask` tools (svc extension beside the function-call pattern), made by the session's own run or by a
 * run of one of its subagents (`where`: the calling turn, and the subagent's id for a subagent's call). While an
 * approval is pending the calling turn is `waiting` and the session `requires_action`, with a `tool_approval` entry in
 * `required_actions` (`subagent_id` set for a subagent's call), answered by an `agent.session.input.tool_approval`
 * event on the session (or decided on /api, the dashboard or the CLI); once decided, the entry goes, the calling turn
 * is `in_progress` again and so is the session when it waits on nothing more. Called under the session's lock.
 */
export interface ApprovalSite {
  turnId: string;
  subagentId?: string;
}

export async function approvalSeen(db: Kysely<DB>, io: TurnIo, t: LiveTurn, runId: string, ev: RunEvent, where: ApprovalSite): Promise<void> {
  const id = String(ev.approvalId ?? '');
  if (!id) return;
  const tx = <T>(fn: Parameters<typeof withTenant<T>>[2]) => withTenant(db, t.tenantId, fn);
  const row = await tx((q) => getSessionRow(q, t.sessionId));
  const others = (row?.required_actions ?? []).filter((r) => !(r.type === 'tool_approval' && r.id === id));
  if (ev.type === 'approval_required') {
    if (t.approvals.has(id)) return;
    t.approvals.set(id, { runId, turnId: where.turnId });
    const action: RequiredAction = {
      type: 'tool_approval',
      id,
      tool_name: String(ev.toolName ?? ''),
      arguments: JSON.stringify(ev.input ?? {}),
      turn_id: where.turnId,
      ...(where.subagentId ? { subagent_id: where.subagentId } : {}),
    };
    await tx((q) => updateTurn(q, where.turnId, { status: 'waiting' }));
    const waiting = await io.patchSession(t.tenantId, t.sessionId, { status: 'requires_action', required_actions: [...others, action] });
    if (waiting) io.emit(t, [io.snapshot('agent.session.requires_action', waiting)]);
    return;
  }
  if (!t.approvals.delete(id)) return;
  await settle(db, io, t, where.turnId, others);
}

/**
 * Forgets the approvals turn `turnId` (a subagent's that ended: its run cancelled them) still waited on, and their
 * entries in `required_actions`.
 */
export async function dropApprovals(db: Kysely<DB>, io: TurnIo, t: LiveTurn, turnId: string): Promise<void> {
  const ids = [...t.approvals].filter(([, a]) => a.turnId === turnId).map(([id]) => id);
  if (ids.length === 0) return;
  for (const id of ids) t.approvals.delete(id);
  const row = await withTenant(db, t.tenantId, (q) => getSessionRow(q, t.sessionId));
  const others = (row?.required_actions ?? []).filter((r) => !(r.type === 'tool_approval' && ids.includes(r.id)));
  await settle(db, io, t, turnId, others);
}

/** After a decision: the calling turn goes on once it waits on nothing more; the session, once none of its turns does. */
async function settle(db: Kysely<DB>, io: TurnIo, t: LiveTurn, turnId: string, actions: RequiredAction[]): Promise<void> {
  const turnWaits = [...t.pending.values()].some((p) => p.site.turnId === turnId) || [...t.approvals.values()].some((a) => a.turnId === turnId);
  if (!turnWaits) await withTenant(db, t.tenantId, (q) => updateTurn(q, turnId, { status: 'in_progress' }));
  if (t.pending.size === 0 && t.approvals.size === 0) {
    const resumed = await io.patchSession(t.tenantId, t.sessionId, { status: 'in_progress', required_actions: actions });
    if (resumed) io.emit(t, [io.snapshot('agent.session.in_progress', resumed)]);
  } else await io.patchSession(t.tenantId, t.sessionId, { required_actions: actions });
}
