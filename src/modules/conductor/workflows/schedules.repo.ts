import { sql } from 'kysely';
import type { Tx } from '../../../db/index.ts';
import type { WorkflowScheduleStatus } from '../../../db/types.ts';

/** SQL for workflow schedules (sql/0015). The scheduler's calls run in system scope, the routes' in a tenant transaction. */
export interface Schedule {
  id: string;
  workflowDefinitionId: string;
  cron: string;
  timezone: string;
  status: WorkflowScheduleStatus;
  nextRunAt: string | null;
  lastFiredAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface ScheduleRow extends Schedule {
  tenantId: string;
}

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

const toRow = (r: any): ScheduleRow => ({
  id: r.id,
  workflowDefinitionId: r.definition_id,
  cron: r.cron,
  timezone: r.timezone,
  status: r.status,
  nextRunAt: iso(r.next_run_at),
  lastFiredAt: iso(r.last_fired_at),
  createdAt: iso(r.created_at)!,
  updatedAt: iso(r.updated_at)!,
  tenantId: r.tenant_id,
});

export const toSchedule = ({ tenantId: _t, ...wire }: ScheduleRow): Schedule => wire;

export async function insertSchedule(tx: Tx, s: { id: string; tenantId: string; definitionId: string; cron: string; timezone: string; nextRunAt: Date }): Promise<ScheduleRow> {
  const row = await tx
    .insertInto('workflow_schedules')
    .values({ id: s.id, tenant_id: s.tenantId, definition_id: s.definitionId, cron: s.cron, timezone: s.timezone, next_run_at: s.nextRunAt })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toRow(row);
}

export async function getSchedule(tx: Tx, id: string, opts: { forUpdate?: boolean } = {}): Promise<ScheduleRow | undefined> {
  let q = tx.selectFrom('workflow_schedules').selectAll().where('id', '=', id);
  if (opts.forUpdate) q = q.forUpdate();
  const row = await q.executeTakeFirst();
  return row ? toRow(row) : undefined;
}

export async function listSchedules(tx: Tx, page: { limit: number; offset: number }): Promise<{ items: Schedule[]; total: number }> {
  const rows = await tx.selectFrom('workflow_schedules').selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute();
  const total = Number((await tx.selectFrom('workflow_schedules').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  return { items: rows.map((r) => toSchedule(toRow(r))), total };
}

export async function updateSchedule(
  tx: Tx,
  id: string,
  patch: Partial<{ status: WorkflowScheduleStatus; next_run_at: Date | null; last_fired_at: Date }>,
): Promise<ScheduleRow> {
  const row = await tx.updateTable('workflow_schedules').set({ ...patch, updated_at: sql<Date>`now()` }).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
  return toRow(row);
}

export async function deleteSchedule(tx: Tx, id: string): Promise<boolean> {
  return (await tx.deleteFrom('workflow_schedules').where('id', '=', id).executeTakeFirst()).numDeletedRows > 0n;
}

/** The scheduler's claim: active schedules whose slot is due, locked so no other conductor handles them at once. */
export async function lockDueSchedules(tx: Tx, now: Date, limit: number): Promise<ScheduleRow[]> {
  const rows = await tx
    .selectFrom('workflow_schedules')
    .selectAll()
    .where('status', '=', 'active')
    .where('next_run_at', '<=', now)
    .orderBy('next_run_at')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute();
  return rows.map(toRow);
}

/** Scheduled runs still pending after `olderThan`: their conductor stopped between the claim and the start. */
export async function unstartedScheduledRuns(tx: Tx, olderThan: Date, limit: number): Promise<Array<{ tenantId: string; id: string }>> {
  const rows = await tx
    .selectFrom('workflow_runs')
    .select(['tenant_id', 'id'])
    .where('schedule_id', 'is not', null)
    .where('status', '=', 0)
    .where('created_at', '<', olderThan)
    .limit(limit)
    .execute();
  return rows.map((r) => ({ tenantId: r.tenant_id, id: r.id }));
}
