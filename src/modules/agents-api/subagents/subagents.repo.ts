import type { Tx } from '../../../db/index.ts';
import { jsonb } from '../../../db/index.ts';
import { keysetRows, type CursorQuery } from '../../crud/index.ts';
import { unixSeconds } from '../wire.ts';

/** SQL for the subagents of agent sessions (sql/0020) and their wire form (spec §2.7). */
export interface Subagent {
  id: string;
  object: 'agent.session.subagent';
  closed_at: number | null;
  instructions: Array<{ type: 'output_text'; text: string }> | null;
  name: string | null;
  opened_at: number;
  parent_agent_id: string;
  session_id: string;
  status: 'active' | 'closed';
}

export interface SubagentRow {
  id: string;
  tenant_id: string;
  session_id: string;
  parent_agent_id: string;
  name: string | null;
  instructions: Subagent['instructions'];
  status: 'active' | 'closed';
  runner_session_id: string | null;
  opened_at: Date;
  closed_at: Date | null;
}

const COLUMNS = ['id', 'tenant_id', 'session_id', 'parent_agent_id', 'name', 'instructions', 'status', 'runner_session_id', 'opened_at', 'closed_at'] as const;

export const toSubagent = (r: SubagentRow): Subagent => ({
  id: r.id,
  object: 'agent.session.subagent',
  closed_at: unixSeconds(r.closed_at),
  instructions: r.instructions,
  name: r.name,
  opened_at: unixSeconds(r.opened_at)!,
  parent_agent_id: r.parent_agent_id,
  session_id: r.session_id,
  status: r.status,
});

export async function insertSubagent(tx: Tx, s: Pick<SubagentRow, 'id' | 'tenant_id' | 'session_id' | 'parent_agent_id' | 'name' | 'instructions'>): Promise<SubagentRow> {
  const row = await tx
    .insertInto('agent_subagents')
    .values({ ...s, instructions: jsonb(s.instructions), status: 'active' })
    .returning(COLUMNS)
    .executeTakeFirstOrThrow();
  return row as unknown as SubagentRow;
}

export async function getSubagent(tx: Tx, sessionId: string, id: string): Promise<SubagentRow | undefined> {
  const row = await tx.selectFrom('agent_subagents').select(COLUMNS).where('session_id', '=', sessionId).where('id', '=', id).executeTakeFirst();
  return row as unknown as SubagentRow | undefined;
}

/** `closed`: closes it (closed_at now); `active`: reopens it (closed_at back to null, opened_at kept). */
export async function setSubagentStatus(tx: Tx, id: string, status: 'active' | 'closed', runnerSessionId?: string): Promise<SubagentRow> {
  const row = await tx
    .updateTable('agent_subagents')
    .set({ status, closed_at: status === 'closed' ? new Date() : null, ...(runnerSessionId ? { runner_session_id: runnerSessionId } : {}) })
    .where('id', '=', id)
    .returning(COLUMNS)
    .executeTakeFirstOrThrow();
  return row as unknown as SubagentRow;
}

export async function listSubagents(tx: Tx, sessionId: string, q: CursorQuery): Promise<Subagent[]> {
  const rows = await keysetRows(tx.selectFrom('agent_subagents').select(COLUMNS).where('session_id', '=', sessionId), 'agent_subagents', q, ['opened_at', 'id']);
  return (rows as unknown as SubagentRow[]).map(toSubagent);
}

/** The runner sessions of a session's subagents (ended with the session). */
export async function subagentRunnerSessions(tx: Tx, sessionId: string): Promise<string[]> {
  const rows = await tx.selectFrom('agent_subagents').select('runner_session_id').where('session_id', '=', sessionId).where('runner_session_id', 'is not', null).execute();
  return rows.map((r) => r.runner_session_id!);
}

/**
 * How deep the agent running on `runnerSessionId` is in the session: 0 for the session's own runner session, 1 for a
 * subagent of the session's agent, 2 for a subagent of that one…; undefined when it is neither (another session's).
 */
export async function runDepth(tx: Tx, sessionId: string, runnerSessionId: string | undefined): Promise<number | undefined> {
  if (!runnerSessionId) return undefined;
  if (runnerSessionId === sessionId) return 0;
  const subs = await tx.selectFrom('agent_subagents').select(['id', 'parent_agent_id', 'runner_session_id']).where('session_id', '=', sessionId).execute();
  const byId = new Map(subs.map((s) => [s.id, s]));
  let sub = subs.find((s) => s.runner_session_id === runnerSessionId);
  if (!sub) return undefined;
  let depth = 1;
  for (; byId.has(sub.parent_agent_id) && depth <= subs.length; depth++) sub = byId.get(sub.parent_agent_id)!;
  return depth;
}

/** Subagent turns not ended, across tenants (system scope: recovery at boot), with the replica that drove them. */
export function unfinishedSubagentTurns(tx: Tx) {
  return tx
    .selectFrom('agent_turns')
    .select(['id', 'tenant_id', 'session_id', 'subagent_id', 'owner_id'])
    .where('subagent_id', 'is not', null)
    .where('status', 'in', ['queued', 'in_progress', 'waiting'])
    .execute();
}
