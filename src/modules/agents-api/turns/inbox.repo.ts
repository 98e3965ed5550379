import { sql } from 'kysely';
import { jsonb, type Tx } from '../../../db/index.ts';

/** SQL of `agent_session_inbox` (turn-inbox.ts): input and function calls handed between conductor replicas. */
export function insertHandOff(tx: Tx, row: { id: string; tenantId: string; sessionId: string; events?: unknown; call?: unknown }) {
  return tx
    .insertInto('agent_session_inbox')
    .values({ id: row.id, tenant_id: row.tenantId, session_id: row.sessionId, ...(row.events !== undefined ? { events: jsonb(row.events) } : {}), ...(row.call !== undefined ? { call: jsonb(row.call) } : {}) })
    .execute();
}

/** Takes an unclaimed hand-off for `owner`; undefined when another replica took it (or it is gone). */
export function claimHandOff(tx: Tx, id: string, owner: string) {
  return tx.updateTable('agent_session_inbox').set({ claimed_by: owner }).where('id', '=', id).where('claimed_by', 'is', null).returning(['session_id', 'events', 'call']).executeTakeFirst();
}

export function unclaimHandOff(tx: Tx, id: string, owner: string) {
  return tx.updateTable('agent_session_inbox').set({ claimed_by: null }).where('id', '=', id).where('claimed_by', '=', owner).execute();
}

export function answerHandOff(tx: Tx, id: string, answer: { error: unknown } | { result: unknown }) {
  const set = 'error' in answer ? { answered: true, error: answer.error === null ? null : jsonb(answer.error) } : { answered: true, result: jsonb(answer.result) };
  return tx.updateTable('agent_session_inbox').set(set).where('id', '=', id).execute();
}

export function readHandOff(tx: Tx, id: string) {
  return tx.selectFrom('agent_session_inbox').select(['claimed_by', 'answered', 'error', 'result']).where('id', '=', id).executeTakeFirst();
}

/** Deletes a hand-off nobody has claimed; true when it was withdrawn. */
export async function withdrawHandOff(tx: Tx, id: string): Promise<boolean> {
  const res = await tx.deleteFrom('agent_session_inbox').where('id', '=', id).where('claimed_by', 'is', null).executeTakeFirst();
  return res.numDeletedRows > 0n;
}

export function deleteHandOff(tx: Tx, id: string) {
  return tx.deleteFrom('agent_session_inbox').where('id', '=', id).execute();
}

/** Hand-offs older than an hour (their receiving replica stopped mid-request). */
export function purgeHandOffs(tx: Tx) {
  return tx.deleteFrom('agent_session_inbox').where('created_at', '<', sql<Date>`now() - interval '1 hour'`).execute();
}
