import { jsonb, type Tx } from '../../../db/index.ts';
import type { SessionEvent } from '../wire.ts';

/** SQL of a session's event log (`agent_session_events`, numbered by `agent_sessions.event_seq`) and idempotency keys. */

/** Reserves `count` sequence numbers on the session; the new last number, or undefined when the session is gone. */
export async function reserveEventSeqs(tx: Tx, sessionId: string, count: number): Promise<number | undefined> {
  const row = await tx
    .updateTable('agent_sessions')
    .set((eb) => ({ event_seq: eb('event_seq', '+', count) }))
    .where('id', '=', sessionId)
    .returning('event_seq')
    .executeTakeFirst();
  return row?.event_seq;
}

export async function insertSessionEvents(tx: Tx, tenantId: string, sessionId: string, stored: ReadonlyArray<{ seq: number; event: SessionEvent }>): Promise<void> {
  await tx
    .insertInto('agent_session_events')
    .values(stored.map((s) => ({ session_id: sessionId, seq: s.seq, tenant_id: tenantId, event: jsonb(s.event) })))
    .execute();
}

/** Up to 10,000 events after `seq`, in order. */
export function sessionEventsAfter(tx: Tx, sessionId: string, seq: number) {
  return tx.selectFrom('agent_session_events').select(['seq', 'event']).where('session_id', '=', sessionId).where('seq', '>', seq).orderBy('seq').limit(10_000).execute();
}

export async function sessionEventSeq(tx: Tx, sessionId: string): Promise<number | undefined> {
  return (await tx.selectFrom('agent_sessions').select('event_seq').where('id', '=', sessionId).executeTakeFirst())?.event_seq;
}

/** True when this call recorded the key; false when it was there already. */
export async function insertIdempotencyKey(tx: Tx, k: { tenantId: string; sessionId: string; key: string; bodyHash: string }): Promise<boolean> {
  const inserted = await tx
    .insertInto('agent_idempotency_keys')
    .values({ session_id: k.sessionId, key: k.key, tenant_id: k.tenantId, body_hash: k.bodyHash })
    .onConflict((oc) => oc.columns(['session_id', 'key']).doNothing())
    .returning('key')
    .executeTakeFirst();
  return inserted !== undefined;
}

export async function idempotencyBodyHash(tx: Tx, sessionId: string, key: string): Promise<string | undefined> {
  return (await tx.selectFrom('agent_idempotency_keys').select('body_hash').where('session_id', '=', sessionId).where('key', '=', key).executeTakeFirst())?.body_hash;
}

export async function deleteIdempotencyKey(tx: Tx, sessionId: string, key: string): Promise<void> {
  await tx.deleteFrom('agent_idempotency_keys').where('session_id', '=', sessionId).where('key', '=', key).execute();
}
