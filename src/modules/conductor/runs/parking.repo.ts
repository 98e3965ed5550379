import type { Tx } from '../../../db/index.ts';

/** SQL for parked runs (parking.ts; sql/0031_parked_runs.sql). */

/** The parked run `runId`, locked; undefined when it is not parked. */
export async function lockParked(tx: Tx, runId: string) {
  return tx.selectFrom('runs').select(['id', 'session_id']).where('id', '=', runId).where('parked_approval', 'is not', null).forUpdate().executeTakeFirst();
}

export async function unmarkParked(tx: Tx, runId: string): Promise<void> {
  await tx.updateTable('runs').set({ parked_approval: null }).where('id', '=', runId).execute();
}

/** Whether the run waits parked on approval `approvalId`. */
export async function isParkedOn(tx: Tx, runId: string, approvalId: string): Promise<boolean> {
  const row = await tx.selectFrom('runs').select('parked_approval').where('id', '=', runId).executeTakeFirst();
  return row?.parked_approval === approvalId;
}

/** Marks a running run parked on `approvalId`; false when it is no longer running. */
export async function markParked(tx: Tx, runId: string, approvalId: string): Promise<boolean> {
  return (await tx.updateTable('runs').set({ parked_approval: approvalId }).where('id', '=', runId).where('status', '=', 'running').returning('id').executeTakeFirst()) !== undefined;
}

/** The status of the run's approval `approvalId`, its row locked. */
export async function lockApprovalStatus(tx: Tx, runId: string, approvalId: string): Promise<string | undefined> {
  return (await tx.selectFrom('approvals').select('status').where('id', '=', approvalId).where('run_id', '=', runId).forUpdate().executeTakeFirst())?.status;
}

/** What a resume needs: the run and its approval (undefined when either is gone). */
export async function parkedWithApproval(tx: Tx, runId: string, approvalId: string) {
  const run = await tx.selectFrom('runs').select(['status', 'session_id', 'profile', 'sub_task', 'parked_approval']).where('id', '=', runId).executeTakeFirst();
  const approval = await tx.selectFrom('approvals').select(['status', 'message', 'decided_input', 'input', 'tool_call_id', 'tool_name']).where('id', '=', approvalId).executeTakeFirst();
  return run && approval ? { run, approval } : undefined;
}

/** Takes a parked run over for its resume (this conductor drives it; `resumedFrom`: the events its log holds). */
export async function claimParked(tx: Tx, runId: string, approvalId: string, ownerId: string, resumedFrom: number): Promise<boolean> {
  const row = await tx
    .updateTable('runs')
    .set({ parked_approval: null, owner_id: ownerId, resumed_from: resumedFrom })
    .where('id', '=', runId)
    .where('parked_approval', '=', approvalId)
    .where('status', '=', 'running')
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}
