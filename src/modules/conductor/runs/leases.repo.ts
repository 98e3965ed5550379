import { sql, type Kysely } from 'kysely';
import { jsonb, type DB, type Tx } from '../../../db/index.ts';
import type { RunEvent } from '../../../contracts/run-event.ts';

/** SQL of run ownership: the conductors' heartbeat leases and what a sweep writes when it ends an orphaned run. */
export async function renewLease(db: Kysely<DB>, ownerId: string, ttlMs: number): Promise<void> {
  const expires = sql<Date>`now() + ${`${ttlMs} milliseconds`}::interval`;
  await db
    .insertInto('conductor_leases')
    .values({ owner_id: ownerId, heartbeat_at: sql`now()`, expires_at: expires })
    .onConflict((oc) => oc.column('owner_id').doUpdateSet({ heartbeat_at: sql`now()`, expires_at: expires }))
    .execute();
}

export async function dropLease(db: Kysely<DB>, ownerId: string): Promise<void> {
  await db.deleteFrom('conductor_leases').where('owner_id', '=', ownerId).execute();
}

/** Leases expired for over an hour are gone for good. */
export async function pruneLeases(tx: Tx): Promise<void> {
  await tx.deleteFrom('conductor_leases').where('expires_at', '<', sql<Date>`now() - interval '1 hour'`).execute();
}

/** Marks a still-running run `interrupted` (system scope: run ids are unique per tenant only); false when it was not running. */
export async function interruptRun(tx: Tx, tenantId: string, runId: string): Promise<boolean> {
  const updated = await tx
    .updateTable('runs')
    .set({ status: 'interrupted', finished_at: new Date() })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', runId)
    .where('status', '=', 'running')
    .returning('id')
    .executeTakeFirst();
  return updated !== undefined;
}

/** Takes over a running run from its dead owner; false when it finished or another replica took it first. */
export async function claimRun(tx: Tx, tenantId: string, runId: string, from: string, to: string): Promise<boolean> {
  const updated = await tx
    .updateTable('runs')
    .set({ owner_id: to })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', runId)
    .where('owner_id', '=', from)
    .where('status', '=', 'running')
    .returning('id')
    .executeTakeFirst();
  return updated !== undefined;
}

/** The interrupted run's terminal event (a conflict fails the sweep's transaction: the seq was read in it). */
export async function insertTerminalEvent(tx: Tx, tenantId: string, runId: string, seq: number, event: RunEvent): Promise<void> {
  await tx.insertInto('run_events').values({ run_id: runId, seq, tenant_id: tenantId, event: jsonb(event) }).execute();
}

export async function releaseInterruptedSession(tx: Tx, sessionId: string): Promise<void> {
  await tx.updateTable('sessions').set({ status: 'idle', last_run_status: 'interrupted' }).where('id', '=', sessionId).where('status', '=', 'running').execute();
}

/** Whether the conductor `ownerId` holds a current lease (it is alive and drives what it owns). */
export async function leaseAlive(db: Kysely<DB>, ownerId: string): Promise<boolean> {
  const row = await db.selectFrom('conductor_leases').select('owner_id').where('owner_id', '=', ownerId).where('expires_at', '>', sql<Date>`now()`).executeTakeFirst();
  return row !== undefined;
}
