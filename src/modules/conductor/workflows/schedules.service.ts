import { withSystem, withTenant } from '../../../db/index.ts';
import { badRequest, notFound } from '../../../shared/errors.ts';
import { prefixedId } from '../../../shared/ids.ts';
import { checkCadence, createSlotLoop, GRACE_MS, nextSlot, SLOT_BATCH, type Scheduler, type SlotTick } from '../automations/index.ts';
import { getDefinition } from './definitions.repo.ts';
import { transition, type EngineDeps } from './engine.ts';
import { insertWorkflowRun } from './workflows.repo.ts';
import { deleteSchedule, getSchedule, insertSchedule, listSchedules, lockDueSchedules, toSchedule, unstartedScheduledRuns, updateSchedule, type Schedule } from './schedules.repo.ts';

/**
 * Workflow schedules: a definition started on a cron (in a timezone), on the automations' slot loop and rules. A slot
 * becomes a workflow run row in the transaction that moves `next_run_at` on; the runs' unique (schedule, slot) key makes
 * each slot start one run, however many conductors tick. The run starts after that commit; one left pending by a
 * conductor that stopped in between is started by the sweep.
 */
type Deps = EngineDeps & { now?: () => Date };
const cadence = (s: { cron: string; timezone: string }) => ({ cron: s.cron, timezone: s.timezone, startAt: null, endAt: null });
const UNSTARTED_MS = 30_000;

export async function createSchedule(deps: Deps, tenantId: string, body: { workflowDefinitionId: string; cron: string; timezone: string }): Promise<Schedule> {
  const now = deps.now?.() ?? new Date();
  const c = cadence(body);
  checkCadence(c, now);
  return withTenant(deps.db, tenantId, async (tx) => {
    if (!(await getDefinition(tx, body.workflowDefinitionId))) throw badRequest(`workflowDefinitionId: unknown workflow definition: ${body.workflowDefinitionId}`);
    return toSchedule(await insertSchedule(tx, { id: prefixedId('wfs'), tenantId, definitionId: body.workflowDefinitionId, cron: body.cron, timezone: body.timezone, nextRunAt: nextSlot(c, now)! }));
  });
}

export function listAllSchedules(deps: Deps, tenantId: string, page: { limit: number; offset: number }) {
  return withTenant(deps.db, tenantId, (tx) => listSchedules(tx, page));
}

export async function getOneSchedule(deps: Deps, tenantId: string, id: string): Promise<Schedule> {
  const row = await withTenant(deps.db, tenantId, (tx) => getSchedule(tx, id));
  if (!row) throw notFound(`unknown workflow schedule: ${id}`);
  return toSchedule(row);
}

/** pause: no more slots (nextRunAt cleared); resume: active again from now, no catch-up. */
export function setScheduleActive(deps: Deps, tenantId: string, id: string, active: boolean): Promise<Schedule> {
  const now = deps.now?.() ?? new Date();
  return withTenant(deps.db, tenantId, async (tx) => {
    const row = await getSchedule(tx, id, { forUpdate: true });
    if (!row) throw notFound(`unknown workflow schedule: ${id}`);
    return toSchedule(await updateSchedule(tx, id, active ? { status: 'active', next_run_at: nextSlot(cadence(row), now) } : { status: 'paused', next_run_at: null }));
  });
}

export async function deleteOneSchedule(deps: Deps, tenantId: string, id: string): Promise<void> {
  if (!(await withTenant(deps.db, tenantId, (tx) => deleteSchedule(tx, id)))) throw notFound(`unknown workflow schedule: ${id}`);
}

/** The workflow schedules' slot source on the shared scheduler loop (automations/scheduler.ts). */
export function createWorkflowScheduler(deps: Deps): Scheduler {
  const start = (tenantId: string, id: string) =>
    transition(deps, tenantId, id, (t) => t.start()).catch((err) => deps.log.warn('starting a scheduled workflow run failed', { workflowRunId: id, error: String(err) }));
  const tick: SlotTick = async (now) => {
    const fired: Array<{ tenantId: string; id: string }> = [];
    const due = await withSystem(deps.db, async (tx) => {
      const rows = await lockDueSchedules(tx, now, SLOT_BATCH);
      for (const s of rows) {
        const c = cadence(s);
        let slot: Date | null = new Date(s.nextRunAt!);
        if (now.getTime() - slot.getTime() > GRACE_MS) slot = nextSlot(c, new Date(now.getTime() - GRACE_MS - 1));
        if (!slot || slot > now) {
          await updateSchedule(tx, s.id, { next_run_at: slot });
          continue;
        }
        const def = await getDefinition(tx, s.workflowDefinitionId);
        const id = prefixedId('wfr');
        const inserted =
          def && (await insertWorkflowRun(tx, { id, tenantId: s.tenantId, name: def.name, definitionId: def.id, input: undefined, nodes: def.nodes, scheduleId: s.id, scheduledFor: slot }));
        await updateSchedule(tx, s.id, { next_run_at: nextSlot(c, slot), ...(inserted ? { last_fired_at: now } : {}) });
        if (inserted) fired.push({ tenantId: s.tenantId, id });
      }
      return rows.length;
    });
    return { due, started: fired.map((f) => start(f.tenantId, f.id)) };
  };
  const sweep = async () => {
    const stale = await withSystem(deps.db, (tx) => unstartedScheduledRuns(tx, new Date(Date.now() - UNSTARTED_MS), 50));
    for (const r of stale) await start(r.tenantId, r.id);
  };
  return createSlotLoop({ tick, sweep, log: deps.log, what: 'workflow schedule' });
}
