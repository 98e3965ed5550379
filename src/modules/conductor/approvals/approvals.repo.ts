import type { Tx } from '../../../db/index.ts';
import { jsonb, sendWithNext } from '../../../db/index.ts';
import type { Approval, ApprovalStatus } from '../../../contracts/approvals.ts';
import type { Page } from '../../crud/index.ts';

/** SQL for approvals (sql/0028_approvals.sql). */
const COLUMNS = ['id', 'run_id', 'session_id', 'tool_call_id', 'tool_name', 'input', 'status', 'message', 'decided_input', 'decided_by', 'created_at', 'expires_at', 'decided_at'] as const;

type Row = {
  id: string;
  run_id: string;
  session_id: string;
  tool_call_id: string | null;
  tool_name: string;
  input: unknown;
  status: ApprovalStatus;
  message: string | null;
  decided_input: unknown;
  decided_by: string | null;
  created_at: Date;
  expires_at: Date;
  decided_at: Date | null;
};

export const toApproval = (r: Row): Approval => ({
  id: r.id,
  runId: r.run_id,
  sessionId: r.session_id,
  toolCallId: r.tool_call_id,
  toolName: r.tool_name,
  input: r.decided_input ?? r.input ?? {},
  status: r.status,
  message: r.message,
  decidedBy: r.decided_by,
  createdAt: new Date(r.created_at).toISOString(),
  expiresAt: new Date(r.expires_at).toISOString(),
  decidedAt: r.decided_at ? new Date(r.decided_at).toISOString() : null,
});

export async function insertApproval(
  tx: Tx,
  a: { id: string; tenantId: string; runId: string; sessionId: string; toolCallId: string | null; toolName: string; input: unknown; expiresAt: Date },
): Promise<Approval> {
  const row = await tx
    .insertInto('approvals')
    .values({ id: a.id, tenant_id: a.tenantId, run_id: a.runId, session_id: a.sessionId, tool_call_id: a.toolCallId, tool_name: a.toolName, input: jsonb(a.input ?? {}), expires_at: a.expiresAt })
    .returning(COLUMNS)
    .executeTakeFirstOrThrow();
  return toApproval(row as Row);
}

export async function getApproval(tx: Tx, id: string): Promise<Approval | undefined> {
  const row = await tx.selectFrom('approvals').select(COLUMNS).where('id', '=', id).executeTakeFirst();
  return row ? toApproval(row as Row) : undefined;
}

/** Moves a pending approval to its decision; undefined when it was no longer pending (someone decided first). */
export async function settleApproval(
  tx: Tx,
  id: string,
  d: { status: Exclude<ApprovalStatus, 'pending'>; message?: string | undefined; input?: unknown; decidedBy: string | null },
): Promise<Approval | undefined> {
  const row = await tx
    .updateTable('approvals')
    .set({ status: d.status, message: d.message ?? null, decided_input: d.input === undefined ? null : jsonb(d.input), decided_by: d.decidedBy, decided_at: new Date() })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .returning(COLUMNS)
    .executeTakeFirst();
  return row ? toApproval(row as Row) : undefined;
}

/** A run that ended leaves nothing pending: its approvals become `cancelled`. */
export async function cancelPendingOfRun(tx: Tx, tenantId: string, runId: string): Promise<void> {
  // names the tenant: the run hooks may run in system scope, where row security does not narrow run ids
  await sendWithNext(tx); // nothing reads its answer: it goes with the transaction's next statement
  await tx.updateTable('approvals').set({ status: 'cancelled', decided_at: new Date() }).where('tenant_id', '=', tenantId).where('run_id', '=', runId).where('status', '=', 'pending').execute();
}

export async function listApprovals(tx: Tx, filter: { status?: ApprovalStatus; runId?: string }, page: Page): Promise<{ items: Approval[]; total: number }> {
  let q = tx.selectFrom('approvals');
  if (filter.status) q = q.where('status', '=', filter.status);
  if (filter.runId) q = q.where('run_id', '=', filter.runId);
  let rows = q.select(COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc');
  if (page.limit !== undefined) rows = rows.limit(page.limit).offset(page.offset);
  const items = ((await rows.execute()) as Row[]).map(toApproval);
  const total = page.limit === undefined ? items.length : Number((await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  return { items, total };
}
