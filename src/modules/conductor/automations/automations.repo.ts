import { sql } from 'kysely';
import type { Tx } from '../../../db/index.ts';
import type { AutomationStatus, FiringOutcome } from '../../../db/types.ts';
import type { Page } from '../../crud/index.ts';

/** SQL for `automations` and `automation_firings` (sql/0013). Tenant calls run in a tenant transaction, the scheduler's in system scope. */
export interface Automation {
  id: string;
  name: string;
  profile: string;
  prompt: string;
  cron: string;
  timezone: string;
  startAt: string | null;
  endAt: string | null;
  sessionMode: 'fresh' | 'persistent';
  overlap: 'skip' | 'queue';
  maxConsecutiveFailures: number;
  status: AutomationStatus;
  nextRunAt: string | null;
  lastFiredAt: string | null;
  consecutiveFailures: number;
  createdAt: string;
  updatedAt: string;
  deletedAt: string | null;
}

/** What the service and scheduler need beyond the wire shape. */
export interface AutomationRow extends Automation {
  tenantId: string;
  sessionId: string | null;
}

export interface Firing {
  id: string;
  automationId: string;
  scheduledFor: string;
  firedAt: string;
  outcome: FiringOutcome | null;
  runId: string | null;
  sessionId: string | null;
  error: string | null;
}

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

const toRow = (r: any): AutomationRow => ({
  id: r.id,
  name: r.name,
  profile: r.profile,
  prompt: r.prompt,
  cron: r.cron,
  timezone: r.timezone,
  startAt: iso(r.start_at),
  endAt: iso(r.end_at),
  sessionMode: r.session_mode,
  overlap: r.overlap,
  maxConsecutiveFailures: r.max_consecutive_failures,
  status: r.status,
  nextRunAt: iso(r.next_run_at),
  lastFiredAt: iso(r.last_fired_at),
  consecutiveFailures: r.consecutive_failures,
  createdAt: iso(r.created_at)!,
  updatedAt: iso(r.updated_at)!,
  deletedAt: iso(r.deleted_at),
  tenantId: r.tenant_id,
  sessionId: r.session_id,
});

export function toAutomation(r: AutomationRow): Automation {
  const { tenantId: _t, sessionId: _s, ...wire } = r;
  return wire;
}

const toFiring = (r: any): Firing => ({
  id: r.id,
  automationId: r.automation_id,
  scheduledFor: iso(r.scheduled_for)!,
  firedAt: iso(r.fired_at)!,
  outcome: r.outcome,
  runId: r.run_id,
  sessionId: r.session_id,
  error: r.error,
});

export interface NewAutomation {
  id: string;
  tenantId: string;
  name: string;
  profile: string;
  prompt: string;
  cron: string;
  timezone: string;
  startAt: Date | null;
  endAt: Date | null;
  sessionMode: 'fresh' | 'persistent';
  overlap: 'skip' | 'queue';
  maxConsecutiveFailures: number;
  nextRunAt: Date | null;
}

/** Undefined when the name is taken by a live automation. */
export async function insertAutomation(tx: Tx, a: NewAutomation): Promise<AutomationRow | undefined> {
  const row = await tx
    .insertInto('automations')
    .values({
      id: a.id,
      tenant_id: a.tenantId,
      name: a.name,
      profile: a.profile,
      prompt: a.prompt,
      cron: a.cron,
      timezone: a.timezone,
      start_at: a.startAt,
      end_at: a.endAt,
      session_mode: a.sessionMode,
      overlap: a.overlap,
      max_consecutive_failures: a.maxConsecutiveFailures,
      next_run_at: a.nextRunAt,
    })
    .onConflict((oc) => oc.doNothing())
    .returningAll()
    .executeTakeFirst();
  return row ? toRow(row) : undefined;
}

export async function listAutomations(tx: Tx, filter: { q?: string; includeDeleted: boolean }, page: Page): Promise<{ items: Automation[]; total: number }> {
  let base = tx.selectFrom('automations');
  if (!filter.includeDeleted) base = base.where('deleted_at', 'is', null);
  if (filter.q) {
    const like = `%${filter.q.replace(/[\\%_]/g, (m) => `\\${m}`)}%`;
    base = base.where((eb) => eb.or([eb('name', 'ilike', like), eb('prompt', 'ilike', like), eb('profile', 'ilike', like)]));
  }
  let q = base.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc');
  if (page.limit !== undefined) q = q.limit(page.limit).offset(page.offset);
  const items = (await q.execute()).map((r) => toAutomation(toRow(r)));
  const total = Number((await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  return { items, total };
}

export async function getAutomation(tx: Tx, id: string, opts: { forUpdate?: boolean } = {}): Promise<AutomationRow | undefined> {
  let q = tx.selectFrom('automations').selectAll().where('id', '=', id);
  if (opts.forUpdate) q = q.forUpdate();
  const row = await q.executeTakeFirst();
  return row ? toRow(row) : undefined;
}

export type AutomationPatch = Partial<{
  profile: string;
  prompt: string;
  cron: string;
  timezone: string;
  start_at: Date | null;
  end_at: Date | null;
  session_mode: 'fresh' | 'persistent';
  overlap: 'skip' | 'queue';
  max_consecutive_failures: number;
  status: AutomationStatus;
  next_run_at: Date | null;
  last_fired_at: Date;
  consecutive_failures: number;
  session_id: string | null;
  deleted_at: Date;
}>;

export async function updateAutomation(tx: Tx, id: string, patch: AutomationPatch): Promise<AutomationRow> {
  const row = await tx
    .updateTable('automations')
    .set({ ...patch, updated_at: sql<Date>`now()` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return toRow(row);
}

/** The scheduler's claim: active automations whose slot is due, locked so no other conductor handles them at once. */
export async function lockDue(tx: Tx, now: Date, limit: number): Promise<AutomationRow[]> {
  const rows = await tx
    .selectFrom('automations')
    .selectAll()
    .where('status', '=', 'active')
    .where('deleted_at', 'is', null)
    .where('next_run_at', '<=', now)
    .orderBy('next_run_at')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute();
  return rows.map(toRow);
}

/** One firing; undefined when this slot already has one (the unique slot key: each slot fires once). */
export async function insertFiring(
  tx: Tx,
  f: { id: string; tenantId: string; automationId: string; scheduledFor: Date; manual: boolean; outcome: FiringOutcome | null; runId: string | null; sessionId: string | null; error?: string | null },
): Promise<Firing | undefined> {
  const row = await tx
    .insertInto('automation_firings')
    .values({
      id: f.id,
      tenant_id: f.tenantId,
      automation_id: f.automationId,
      scheduled_for: f.scheduledFor,
      manual: f.manual,
      outcome: f.outcome,
      run_id: f.runId,
      session_id: f.sessionId,
      error: f.error ?? null,
    })
    .onConflict((oc) => oc.doNothing())
    .returningAll()
    .executeTakeFirst();
  return row ? toFiring(row) : undefined;
}

/** A firing whose run is still running (a firing whose run never started does not count: see failUnstarted). */
export async function hasRunningFiring(tx: Tx, automationId: string): Promise<boolean> {
  const row = await tx
    .selectFrom('automation_firings as f')
    .innerJoin('runs as r', (j) => j.onRef('r.id', '=', 'f.run_id').onRef('r.tenant_id', '=', 'f.tenant_id'))
    .select('f.id')
    .where('f.automation_id', '=', automationId)
    .where('f.outcome', 'is', null)
    .where('r.status', '=', 'running')
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Firings claimed by a conductor that died before their run was created: still open after `olderThan`, with no run
 * row. They end `failed`, so the list tells the truth (system scope: every tenant).
 */
export async function failUnstarted(tx: Tx, olderThan: Date): Promise<number> {
  const rows = await tx
    .updateTable('automation_firings as f')
    .set({ outcome: 'failed', error: 'its run never started: the conductor that claimed this slot stopped first' })
    .where('f.outcome', 'is', null)
    .where('f.run_id', 'is not', null)
    .where('f.fired_at', '<', olderThan)
    .where(({ not, exists, selectFrom }) => not(exists(selectFrom('runs as r').select('r.id').whereRef('r.id', '=', 'f.run_id').whereRef('r.tenant_id', '=', 'f.tenant_id'))))
    .returning('f.id')
    .execute();
  return rows.length;
}

export async function setFiringSession(tx: Tx, id: string, sessionId: string): Promise<void> {
  await tx.updateTable('automation_firings').set({ session_id: sessionId }).where('id', '=', id).execute();
}

/** Records the outcome once (null → ok/failed); undefined when it was already recorded (a redelivered hook). */
export async function finishFiring(tx: Tx, where: { runId: string } | { id: string }, outcome: FiringOutcome, error: string | null): Promise<Firing | undefined> {
  let q = tx.updateTable('automation_firings').set({ outcome, error }).where('outcome', 'is', null);
  q = 'runId' in where ? q.where('run_id', '=', where.runId) : q.where('id', '=', where.id);
  const row = await q.returningAll().executeTakeFirst();
  return row ? toFiring(row) : undefined;
}

export async function listFirings(tx: Tx, filter: { automation?: string; outcome?: FiringOutcome }, page: Page): Promise<{ items: Firing[]; total: number }> {
  let base = tx.selectFrom('automation_firings');
  if (filter.automation) base = base.where('automation_id', '=', filter.automation);
  if (filter.outcome) base = base.where('outcome', '=', filter.outcome);
  const items = (await base.selectAll().orderBy('fired_at', 'desc').orderBy('id', 'desc').limit(page.limit ?? 200).offset(page.offset).execute()).map(toFiring);
  const total = Number((await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  return { items, total };
}

/** The automation whose firing `runId` is, if any. */
export async function automationOfRun(tx: Tx, runId: string): Promise<string | undefined> {
  const row = await tx.selectFrom('automation_firings').select('automation_id').where('run_id', '=', runId).executeTakeFirst();
  return row?.automation_id;
}
