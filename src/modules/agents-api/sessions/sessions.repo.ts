import { sql } from 'kysely';
import type { Tx } from '../../../db/index.ts';
import { jsonb } from '../../../db/index.ts';
import type { AgentSessionStatus, AgentTurnStatus } from '../../../db/types.ts';
import { keysetRows } from '../../crud/index.ts';
import type { CursorQuery } from '../../crud/index.ts';
import type { AgentSession, RequiredAction, SessionAgent, SessionItem, SessionTurnError, TokenUsage, Turn } from '../wire.ts';
import { unixSeconds } from '../wire.ts';

/** SQL for agent sessions, their turns and items. Row → wire mapping lives here too (it is one line per field). */
export interface SessionRow {
  id: string;
  tenant_id: string;
  agent_id: string | null;
  profile_name: string;
  agent: SessionAgent;
  secrets: Record<string, unknown>;
  environment: AgentSession['environment'];
  metadata: Record<string, string>;
  vault_ids: string[];
  status: AgentSessionStatus;
  error: string | null;
  usage: TokenUsage | null;
  required_actions: RequiredAction[];
  active_turn_id: string | null;
  created_at: Date;
  last_active_at: Date;
}

const SESSION_COLUMNS = [
  'id', 'tenant_id', 'agent_id', 'profile_name', 'agent', 'secrets', 'environment', 'metadata', 'vault_ids', 'status', 'error', 'usage',
  'required_actions', 'active_turn_id', 'created_at', 'last_active_at',
] as const;

export const toSession = (r: SessionRow): AgentSession => ({
  id: r.id,
  object: 'agent.session',
  agent: r.agent,
  created_at: unixSeconds(r.created_at)!,
  environment: r.environment,
  error: r.error,
  last_active_at: unixSeconds(r.last_active_at)!,
  metadata: r.metadata,
  required_actions: r.required_actions,
  status: r.status,
  usage: r.usage,
  vault_ids: r.vault_ids,
});

export type NewSession = Pick<SessionRow, 'id' | 'tenant_id' | 'agent_id' | 'profile_name' | 'agent' | 'secrets' | 'environment' | 'metadata' | 'vault_ids'>;

export async function insertSession(tx: Tx, s: NewSession): Promise<SessionRow> {
  const row = await tx
    .insertInto('agent_sessions')
    .values({
      ...s,
      agent: jsonb(s.agent),
      secrets: jsonb(s.secrets),
      environment: jsonb(s.environment),
      metadata: jsonb(s.metadata),
      vault_ids: jsonb(s.vault_ids),
    })
    .returning(SESSION_COLUMNS)
    .executeTakeFirstOrThrow();
  return row as unknown as SessionRow;
}

export async function getSessionRow(tx: Tx, id: string): Promise<SessionRow | undefined> {
  return (await tx.selectFrom('agent_sessions').select(SESSION_COLUMNS).where('id', '=', id).executeTakeFirst()) as unknown as SessionRow | undefined;
}

export type SessionPatch = Partial<Pick<SessionRow, 'agent' | 'metadata' | 'status' | 'error' | 'usage' | 'required_actions' | 'active_turn_id'>> & { touch?: boolean };

export async function updateSession(tx: Tx, id: string, p: SessionPatch): Promise<SessionRow | undefined> {
  const set: Record<string, unknown> = {};
  for (const key of ['agent', 'metadata', 'usage', 'required_actions'] as const) if (p[key] !== undefined) set[key] = jsonb(p[key]);
  for (const key of ['status', 'error', 'active_turn_id'] as const) if (p[key] !== undefined) set[key] = p[key];
  if (p.touch) set.last_active_at = new Date();
  if (Object.keys(set).length === 0) return getSessionRow(tx, id);
  const row = await tx.updateTable('agent_sessions').set(set).where('id', '=', id).returning(SESSION_COLUMNS).executeTakeFirst();
  return row as unknown as SessionRow | undefined;
}

export async function listSessionRows(tx: Tx, q: CursorQuery, agentId: string | undefined): Promise<SessionRow[]> {
  let query = tx.selectFrom('agent_sessions').select(SESSION_COLUMNS);
  if (agentId !== undefined) query = query.where('agent_id', '=', agentId);
  return (await keysetRows(query, 'agent_sessions', q)) as unknown as SessionRow[];
}

export async function deleteSessionRow(tx: Tx, id: string): Promise<boolean> {
  return (await tx.deleteFrom('agent_sessions').where('id', '=', id).returning('id').executeTakeFirst()) !== undefined;
}

// ── turns ────────────────────────────────────────────────────────────────────────────────────────────────────────

interface TurnRow {
  id: string;
  session_id: string;
  agent_id: string;
  subagent_id: string | null;
  status: AgentTurnStatus;
  error: SessionTurnError | null;
  usage: TokenUsage | null;
  created_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
}
const TURN_COLUMNS = ['id', 'session_id', 'agent_id', 'subagent_id', 'status', 'error', 'usage', 'created_at', 'started_at', 'completed_at'] as const;

export const toTurn = (r: TurnRow): Turn => ({
  id: r.id,
  object: 'agent.session.turn',
  agent_id: r.agent_id,
  completed_at: unixSeconds(r.completed_at),
  created_at: unixSeconds(r.created_at)!,
  error: r.error,
  session_id: r.session_id,
  started_at: unixSeconds(r.started_at),
  status: r.status,
  subagent_id: r.subagent_id,
  usage: r.usage,
});

export async function insertTurn(tx: Tx, t: { id: string; tenantId: string; sessionId: string; agentId: string; ownerId: string; subagentId?: string }): Promise<Turn> {
  const row = await tx
    .insertInto('agent_turns')
    .values({ id: t.id, tenant_id: t.tenantId, session_id: t.sessionId, agent_id: t.agentId, subagent_id: t.subagentId ?? null, status: 'queued', owner_id: t.ownerId })
    .returning(TURN_COLUMNS)
    .executeTakeFirstOrThrow();
  return toTurn(row as unknown as TurnRow);
}

/** Who drives a turn: its runs and the replica that owns it (whether that replica is alive is the conductor's to say). */
export async function turnDriver(tx: Tx, turnId: string): Promise<{ runIds: string[]; ownerId: string | null } | undefined> {
  const row = await tx.selectFrom('agent_turns').select(['run_ids', 'owner_id']).where('id', '=', turnId).executeTakeFirst();
  return row && { runIds: row.run_ids as string[], ownerId: row.owner_id };
}

export async function updateTurn(
  tx: Tx,
  id: string,
  p: { status?: AgentTurnStatus; error?: SessionTurnError | null; usage?: TokenUsage | null; started?: boolean; completed?: boolean; runId?: string },
): Promise<Turn> {
  const set: Record<string, unknown> = {};
  if (p.status !== undefined) set.status = p.status;
  if (p.error !== undefined) set.error = jsonb(p.error);
  if (p.usage !== undefined) set.usage = jsonb(p.usage);
  if (p.started) set.started_at = new Date();
  if (p.completed) set.completed_at = new Date();
  if (p.runId) set.run_ids = sql`run_ids || ${jsonb([p.runId])}`;
  const row = await tx.updateTable('agent_turns').set(set).where('id', '=', id).returning(TURN_COLUMNS).executeTakeFirstOrThrow();
  return toTurn(row as unknown as TurnRow);
}

export async function getTurn(tx: Tx, sessionId: string, id: string): Promise<Turn | undefined> {
  const row = await tx.selectFrom('agent_turns').select(TURN_COLUMNS).where('session_id', '=', sessionId).where('id', '=', id).executeTakeFirst();
  return row && toTurn(row as unknown as TurnRow);
}

/** Ordered by creation time then turn id; `after` is exclusive (§1.2 route 13). `subagentId`: that subagent's turns only. */
export async function listTurns(tx: Tx, sessionId: string, q: CursorQuery, subagentId?: string): Promise<Turn[]> {
  let query = tx.selectFrom('agent_turns').select(TURN_COLUMNS).where('session_id', '=', sessionId);
  if (subagentId !== undefined) query = query.where('subagent_id', '=', subagentId);
  const rows = await keysetRows(query, 'agent_turns', q);
  return (rows as unknown as TurnRow[]).map(toTurn);
}

// ── items ────────────────────────────────────────────────────────────────────────────────────────────────────────

/** Inserts an item, or replaces the stored copy when it is done (same id). `subagentId`: an item of that subagent. */
export async function saveItem(tx: Tx, tenantId: string, sessionId: string, item: SessionItem, subagentId?: string): Promise<void> {
  await tx
    .insertInto('agent_items')
    .values({ id: item.id, tenant_id: tenantId, session_id: sessionId, turn_id: item.turn_id, item: jsonb(item), subagent_id: subagentId ?? null })
    .onConflict((oc) => oc.column('id').doUpdateSet({ item: jsonb(item) }))
    .execute();
}

/** The session's own conversation (no subagent's items), or with `of` a subagent's items (of one of its turns). */
export async function listItems(tx: Tx, sessionId: string, q: CursorQuery, of?: { subagentId: string; turnId?: string }): Promise<SessionItem[]> {
  let query = tx.selectFrom('agent_items').select(['item']).where('session_id', '=', sessionId);
  query = of ? query.where('subagent_id', '=', of.subagentId) : query.where('subagent_id', 'is', null);
  if (of?.turnId !== undefined) query = query.where('turn_id', '=', of.turnId);
  const rows = await keysetRows(query, 'agent_items', q, ['position']);
  return rows.map((r) => r.item as unknown as SessionItem);
}

/** Every session with a turn in progress, across tenants (system scope: recovery at boot). */
export function sessionsWithActiveTurns(tx: Tx) {
  return tx.selectFrom('agent_sessions').select(['id', 'tenant_id']).where('active_turn_id', 'is not', null).execute();
}
