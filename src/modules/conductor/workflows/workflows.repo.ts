import { sql } from 'kysely';
import type { Tx } from '../../../db/index.ts';
import { jsonb } from '../../../db/index.ts';
import { RUN_LABELS, toWire, type NodeSpec, type NodeState, type RunLabel, type WorkflowState, type Changes, type PlanDelta, type WireRun } from './plan.ts';

/** SQL for workflow runs, their nodes and plan events (sql/0015). Tenant calls run in a tenant transaction. */
const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

export interface RunSummary {
  id: string;
  name: string;
  definitionId: string | null;
  /** The schedule and slot that started it, if one did. */
  scheduleId: string | null;
  scheduledFor: string | null;
  status: number;
  statusLabel: RunLabel;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

export interface LoadedRun {
  state: WorkflowState;
  tenantId: string;
  seq: number;
}

export async function insertWorkflowRun(
  tx: Tx,
  r: { id: string; tenantId: string; name: string; definitionId: string | null; input: unknown; nodes: NodeSpec[]; scheduleId?: string; scheduledFor?: Date },
): Promise<boolean> {
  const row = await tx
    .insertInto('workflow_runs')
    .values({
      id: r.id,
      tenant_id: r.tenantId,
      name: r.name,
      definition_id: r.definitionId,
      input: r.input === undefined ? null : jsonb(r.input),
      schedule_id: r.scheduleId ?? null,
      scheduled_for: r.scheduledFor ?? null,
    })
    .onConflict((oc) => oc.doNothing())
    .returning('id')
    .executeTakeFirst();
  if (!row) return false;
  await tx
    .insertInto('workflow_nodes')
    .values(
      r.nodes.map((n, i) => ({
        tenant_id: r.tenantId,
        workflow_run_id: r.id,
        id: n.id,
        position: i,
        profile: n.profile,
        prompt: n.prompt,
        depends_on: jsonb(n.dependsOn),
        on_error: n.onError,
      })),
    )
    .execute();
  return true;
}

/** The run and its nodes; `forUpdate` locks the run row, which serialises every transition of that run. */
export async function loadWorkflowRun(tx: Tx, id: string, opts: { forUpdate?: boolean } = {}): Promise<LoadedRun | undefined> {
  let q = tx.selectFrom('workflow_runs').selectAll().where('id', '=', id);
  if (opts.forUpdate) q = q.forUpdate();
  const r = await q.executeTakeFirst();
  if (!r) return undefined;
  const nodes = await tx.selectFrom('workflow_nodes').selectAll().where('workflow_run_id', '=', id).orderBy('position').execute();
  return {
    tenantId: r.tenant_id,
    seq: Number(r.seq),
    state: {
      id: r.id,
      name: r.name,
      definitionId: r.definition_id,
      input: r.input ?? null,
      status: r.status,
      createdAt: iso(r.created_at)!,
      startedAt: iso(r.started_at),
      finishedAt: iso(r.finished_at),
      nodes: nodes.map(
        (n): NodeState => ({
          id: n.id,
          profile: n.profile,
          prompt: n.prompt,
          dependsOn: n.depends_on,
          onError: n.on_error,
          status: n.status,
          runId: n.run_id,
          output: n.output,
          error: n.error,
          startedAt: iso(n.started_at),
          finishedAt: iso(n.finished_at),
        }),
      ),
    },
  };
}

/** The node whose run is `runId`, if any (most finished runs are no workflow node's). */
export async function workflowOfNodeRun(tx: Tx, tenantId: string, runId: string): Promise<string | undefined> {
  const row = await tx.selectFrom('workflow_nodes').select('workflow_run_id').where('tenant_id', '=', tenantId).where('run_id', '=', runId).executeTakeFirst();
  return row?.workflow_run_id;
}

/**
 * Writes a transition back: the nodes and run as they are now (each node row only when it differs from `before`),
 * one event per change numbered after the run's last, and the run's new event number.
 */
export async function saveTransition(tx: Tx, loaded: LoadedRun, before: WorkflowState, changes: Changes): Promise<number> {
  const s = loaded.state;
  const old = new Map(before.nodes.map((n) => [n.id, JSON.stringify(n)]));
  for (const [i, n] of s.nodes.entries()) {
    const prev = old.get(n.id);
    if (prev === JSON.stringify(n)) continue;
    const row = {
      position: i,
      profile: n.profile,
      prompt: n.prompt,
      depends_on: jsonb(n.dependsOn),
      on_error: n.onError,
      status: n.status,
      run_id: n.runId,
      output: n.output,
      error: n.error,
      started_at: n.startedAt,
      finished_at: n.finishedAt,
    };
    if (prev === undefined) await tx.insertInto('workflow_nodes').values({ tenant_id: loaded.tenantId, workflow_run_id: s.id, id: n.id, ...row }).execute();
    else await tx.updateTable('workflow_nodes').set(row).where('workflow_run_id', '=', s.id).where('id', '=', n.id).execute();
  }
  if (changes.events.length === 0) return loaded.seq;
  // event 0 is the plan before its first change: the base the stream rebuilds snapshots from
  if (loaded.seq === 0) await tx.insertInto('workflow_events').values({ tenant_id: loaded.tenantId, workflow_run_id: s.id, seq: 0, payload: jsonb({ workflowRun: toWire(before) }) }).execute();
  const seq = loaded.seq + changes.events.length;
  await tx
    .updateTable('workflow_runs')
    .set({ status: s.status, started_at: s.startedAt, finished_at: s.finishedAt, seq, updated_at: sql<Date>`now()` })
    .where('id', '=', s.id)
    .execute();
  await tx
    .insertInto('workflow_events')
    .values(changes.events.map((e, i) => ({ tenant_id: loaded.tenantId, workflow_run_id: s.id, seq: loaded.seq + i + 1, payload: jsonb(e) })))
    .execute();
  return seq;
}

export interface StoredPlanEvent {
  seq: number;
  /** Event 0 holds the base snapshot; every later one a delta. */
  payload: PlanDelta | { workflowRun: WireRun };
}

/** Events with `from <= seq <= to`, in order. */
export async function planEvents(tx: Tx, id: string, from: number, to: number, limit = 500): Promise<StoredPlanEvent[]> {
  const rows = await tx.selectFrom('workflow_events').select(['seq', 'payload']).where('workflow_run_id', '=', id).where('seq', '>=', from).where('seq', '<=', to).orderBy('seq').limit(limit).execute();
  return rows.map((r) => ({ seq: Number(r.seq), payload: r.payload as StoredPlanEvent['payload'] }));
}

export async function runStatus(tx: Tx, id: string): Promise<{ status: number; seq: number } | undefined> {
  const r = await tx.selectFrom('workflow_runs').select(['status', 'seq']).where('id', '=', id).executeTakeFirst();
  return r ? { status: r.status, seq: Number(r.seq) } : undefined;
}

export async function listWorkflowRuns(tx: Tx, filter: { status?: number; name?: string; scheduleId?: string }, page: { limit: number; offset: number }): Promise<{ items: RunSummary[]; total: number }> {
  let base = tx.selectFrom('workflow_runs');
  if (filter.status !== undefined) base = base.where('status', '=', filter.status);
  if (filter.name !== undefined) base = base.where('name', '=', filter.name);
  if (filter.scheduleId !== undefined) base = base.where('schedule_id', '=', filter.scheduleId);
  const rows = await base.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute();
  const total = Number((await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  const items = rows.map((r) => ({
    id: r.id,
    name: r.name,
    definitionId: r.definition_id,
    scheduleId: r.schedule_id,
    scheduledFor: iso(r.scheduled_for),
    status: r.status,
    statusLabel: RUN_LABELS[r.status]!,
    createdAt: iso(r.created_at)!,
    startedAt: iso(r.started_at),
    finishedAt: iso(r.finished_at),
  }));
  return { items, total };
}

/**
 * Nodes claimed (running, run id chosen) longer than `olderThan` ago whose run row never appeared: the conductor that
 * claimed them stopped between the claim and the run (system scope: every tenant).
 */
export async function findUnstarted(tx: Tx, olderThan: Date, limit: number): Promise<Array<{ tenantId: string; workflowRunId: string; runId: string }>> {
  const rows = await tx
    .selectFrom('workflow_nodes as n')
    .select(['n.tenant_id', 'n.workflow_run_id', 'n.run_id'])
    .where('n.status', '=', 2)
    .where('n.started_at', '<', olderThan)
    .where(({ not, exists, selectFrom }) => not(exists(selectFrom('runs as r').select('r.id').whereRef('r.id', '=', 'n.run_id').whereRef('r.tenant_id', '=', 'n.tenant_id'))))
    .limit(limit)
    .execute();
  return rows.map((r) => ({ tenantId: r.tenant_id, workflowRunId: r.workflow_run_id, runId: r.run_id! }));
}

/** Nodes still running whose run ended before `endedBefore` (their runFinished delivery is late; system scope). */
export async function findEndedUnrecorded(tx: Tx, endedBefore: Date, limit: number): Promise<Array<{ tenantId: string; runId: string; status: string }>> {
  const rows = await tx
    .selectFrom('workflow_nodes as n')
    .innerJoin('runs as r', (j) => j.onRef('r.id', '=', 'n.run_id').onRef('r.tenant_id', '=', 'n.tenant_id'))
    .select(['n.tenant_id', 'n.run_id', 'r.status'])
    .where('n.status', '=', 2)
    .where('r.status', '<>', 'running')
    .where('r.finished_at', '<', endedBefore)
    .limit(limit)
    .execute();
  return rows.map((r) => ({ tenantId: r.tenant_id, runId: r.run_id!, status: r.status }));
}

export async function runExists(tx: Tx, runId: string): Promise<boolean> {
  return (await tx.selectFrom('runs').select('id').where('id', '=', runId).executeTakeFirst()) !== undefined;
}

/** The final assistant text of a finished run (the last whole `assistant` event, else the `result` message). */
export async function finalText(tx: Tx, tenantId: string, runId: string): Promise<string> {
  const rows = await tx
    .selectFrom('run_events')
    .select(sql<string | null>`event->>'message'`.as('message'))
    .select(sql<string>`event->>'type'`.as('type'))
    .where('tenant_id', '=', tenantId)
    .where('run_id', '=', runId)
    .where((eb) => eb.or([eb(sql<string>`event->>'type'`, '=', 'result'), eb.and([eb(sql<string>`event->>'type'`, '=', 'assistant'), eb(sql<string>`coalesce(event->>'delta', 'false')`, '=', 'false')])]))
    .orderBy('seq', 'desc')
    .limit(5)
    .execute();
  return rows.find((r) => r.type === 'assistant')?.message ?? rows.find((r) => r.type === 'result')?.message ?? '';
}

/** The message of the run's terminal error event, if it ended with one. */
export async function errorText(tx: Tx, tenantId: string, runId: string): Promise<string | undefined> {
  const row = await tx
    .selectFrom('run_events')
    .select(sql<string | null>`event->>'message'`.as('message'))
    .where('tenant_id', '=', tenantId)
    .where('run_id', '=', runId)
    .where(sql<string>`event->>'type'`, '=', 'error')
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.message ?? undefined;
}

