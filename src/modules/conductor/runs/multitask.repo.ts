import { sql } from 'kysely';
import type { Tx } from '../../../db/index.ts';

/** SQL of busy sessions (multitask.ts): the session lock, the queue of a session, and the runs an interrupt stops. */

/** Locks the session row for this transaction and returns its status (undefined: no such session). */
export async function lockSession(tx: Tx, sessionId: string): Promise<string | undefined> {
  const row = await tx.selectFrom('sessions').select('status').where('id', '=', sessionId).forUpdate().executeTakeFirst();
  return row?.status;
}

export async function countQueued(tx: Tx, sessionId: string): Promise<number> {
  const row = await tx.selectFrom('runs').select((eb) => eb.fn.countAll<number>().as('n')).where('session_id', '=', sessionId).where('status', '=', 'queued').executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function hasQueued(tx: Tx, sessionId: string): Promise<boolean> {
  const row = await tx.selectFrom('runs').select('id').where('session_id', '=', sessionId).where('status', '=', 'queued').limit(1).executeTakeFirst();
  return row !== undefined;
}

/** The run in progress on the session, if any. */
export async function runningOn(tx: Tx, sessionId: string): Promise<string | undefined> {
  const row = await tx.selectFrom('runs').select('id').where('session_id', '=', sessionId).where('status', '=', 'running').orderBy('started_at', 'desc').executeTakeFirst();
  return row?.id;
}

export interface QueuedRow {
  id: string;
  profile: string;
  sub_task: Record<string, unknown>;
}

/**
 * The session's next queued run, locked (another conductor starting the same queue skips it): a run posted with
 * `interrupt` first, then in the order they were posted.
 */
export async function nextQueued(tx: Tx, sessionId: string): Promise<QueuedRow | undefined> {
  return (await tx
    .selectFrom('runs')
    .select(['id', 'profile', 'sub_task'])
    .where('session_id', '=', sessionId)
    .where('status', '=', 'queued')
    .orderBy(sql`(multitask = 'interrupt')`, 'desc')
    .orderBy('started_at')
    .orderBy('id')
    .limit(1)
    .forUpdate()
    .skipLocked()
    .executeTakeFirst()) as QueuedRow | undefined;
}

/** Moves a queued run to `running`, owned by `ownerId`, its start time now; false when it left the queue meanwhile. */
export async function startQueuedRow(tx: Tx, runId: string, ownerId: string): Promise<boolean> {
  const row = await tx
    .updateTable('runs')
    .set({ status: 'running', owner_id: ownerId, started_at: sql`now()` })
    .where('id', '=', runId)
    .where('status', '=', 'queued')
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** Whether the run is queued, locking it (a cancel and the queue's start never both take it). */
export async function lockQueued(tx: Tx, runId: string): Promise<boolean> {
  const row = await tx.selectFrom('runs').select('id').where('id', '=', runId).where('status', '=', 'queued').forUpdate().executeTakeFirst();
  return row !== undefined;
}

/** Ends a queued run that never started (cancelled, or its session shut down); false when it is not queued (any more). */
export async function endQueuedRow(tx: Tx, runId: string, status: 'cancelled' | 'error'): Promise<boolean> {
  const row = await tx
    .updateTable('runs')
    .set({ status, finished_at: new Date() })
    .where('id', '=', runId)
    .where('status', '=', 'queued')
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** Ends a running run `cancelled` with a reason (an interrupt); false when it already left `running`. */
export async function cancelRunningRow(tx: Tx, runId: string, reason: string): Promise<boolean> {
  const row = await tx
    .updateTable('runs')
    .set({ status: 'cancelled', finished_at: new Date(), end_reason: reason })
    .where('id', '=', runId)
    .where('status', '=', 'running')
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

export async function endReasonOf(tx: Tx, runId: string): Promise<string | null> {
  const row = await tx.selectFrom('runs').select('end_reason').where('id', '=', runId).executeTakeFirst();
  return row?.end_reason ?? null;
}

/**
 * Sessions with queued runs and nothing in progress (system scope): what a sweep starts, e.g. a queue whose running
 * run ended while no conductor was up to start the next one.
 */
export async function idleQueues(tx: Tx): Promise<Array<{ tenant_id: string; session_id: string }>> {
  return tx
    .selectFrom('runs')
    .innerJoin('sessions as s', 's.id', 'runs.session_id')
    .select(['runs.tenant_id', 'runs.session_id'])
    .distinct()
    .where('runs.status', '=', 'queued')
    .where('s.status', 'in', ['idle', 'errored', 'shutdown'])
    .execute();
}
