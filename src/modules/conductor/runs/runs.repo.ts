import { sql, type ExpressionBuilder, type SqlBool } from 'kysely';
import type { DB } from '../../../db/index.ts';
import type { Tx } from '../../../db/index.ts';
import { jsonb, storableJson } from '../../../db/index.ts';
import type { RunStatus } from '../../../db/types.ts';
import { currentEvent, type RunEvent } from '../../../contracts/run-event.ts';
import type { Page } from '../../crud/index.ts';
import type { StoredEvent } from './hub.ts';
import type { ProfileSpec } from '../../../contracts/runner.client.ts';
import { sealedKeysColumn, type SealedKey } from '../provider-keys/index.ts';
import { toRunFinished, usageSums, type RunFinished, type RunFinishedRow } from '../hooks/index.ts';

/** SQL for runs and their event log. */
export interface RunSummary {
  id: string;
  subTask: Record<string, unknown>;
  /** `waiting` (an extension of seed 000's statuses): a running run with a pending approval (sql/0028_approvals.sql). */
  status: RunStatus | 'waiting';
  startedAt: string;
  finishedAt: string | null;
  /** The end user the run acted for, when one was named. */
  userId?: string;
  /** Why a cancelled run was stopped, when not by a cancel: `interrupted` (a run posted with `multitask: "interrupt"`). */
  reason?: string;
}

export interface RunRow {
  id: string;
  tenant_id: string;
  session_id: string;
  sub_task: Record<string, unknown>;
  status: RunStatus;
  owner_id: string;
  started_at: Date;
  finished_at: Date | null;
  end_user_id: string | null;
  end_reason: string | null;
}

/**
 * The profile a run starts with, the tenant's sealed provider keys (usually none) and, for a run on an existing session
 * of that profile, the profile snapshot the session runs on (its model, not the profile's current one, is what the
 * run calls), in one statement: whose key the run calls its model with (provider-keys/run-key.ts) costs no round trip
 * of its own.
 */
export async function getRunProfile(tx: Tx, name: string, sessionId?: string): Promise<{ spec: ProfileSpec; keys: SealedKey[]; snapshot?: ProfileSpec } | undefined> {
  const row = await tx
    .selectFrom('profiles')
    .select((eb) => [
      'spec',
      sealedKeysColumn(tx).as('keys'),
      eb.selectFrom('sessions').select('profile_snapshot').where('id', '=', sessionId ?? null).where('profile', '=', name).as('snapshot'),
    ])
    .where('name', '=', name)
    .executeTakeFirst();
  if (!row) return undefined;
  return { spec: row.spec as unknown as ProfileSpec, keys: row.keys, ...(row.snapshot ? { snapshot: row.snapshot as unknown as ProfileSpec } : {}) };
}

const COLUMNS = ['id', 'tenant_id', 'session_id', 'sub_task', 'status', 'owner_id', 'started_at', 'finished_at', 'end_user_id', 'end_reason'] as const;

/** Statuses of a run that has not ended: `queued` (waiting on a busy session) and `running`. */
export const LIVE_STATUSES: ReadonlySet<RunStatus> = new Set(['queued', 'running']);

/** The statuses runs are listed and filtered by: the stored ones and `waiting` (a running run a pending approval holds). */
export const RUN_STATUSES = ['queued', 'running', 'waiting', 'ok', 'error', 'cancelled', 'interrupted'] as const;
export type ShownRunStatus = (typeof RUN_STATUSES)[number];

/** Whether a pending approval holds the run (`runs` in scope): a running run shown as `waiting`. */
export const waitingOf = (eb: ExpressionBuilder<DB, 'runs'>) =>
  eb.exists(eb.selectFrom('approvals as a').select(sql`1`.as('x')).whereRef('a.tenant_id', '=', 'runs.tenant_id').whereRef('a.run_id', '=', 'runs.id').where('a.status', '=', 'pending'));

/** A run's status as it is shown: `waiting` for a running run a pending approval holds (`waitingOf`). */
export const shownStatus = <S extends string>(status: S, waiting: SqlBool | undefined): S | 'waiting' => (status === 'running' && waiting ? 'waiting' : status);

export const toSummary = (r: RunRow & { waiting?: boolean }): RunSummary => ({
  id: r.id,
  subTask: r.sub_task,
  status: shownStatus(r.status, r.waiting),
  startedAt: new Date(r.started_at).toISOString(),
  finishedAt: r.finished_at ? new Date(r.finished_at).toISOString() : null,
  ...(r.end_user_id ? { userId: r.end_user_id } : {}),
  ...(r.end_reason ? { reason: r.end_reason } : {}),
});

export interface CostInputs {
  runtime: string;
  model: string | null;
  keySource: 'platform' | 'tenant';
}

/**
 * False when the tenant already has a run of this id. The insert then fails (it is not skipped), so the transaction is
 * rolled back even when its commit went out with this statement (runs.service.ts).
 */
export async function insertRun(
  tx: Tx,
  r: {
    id: string;
    tenantId: string;
    sessionId: string;
    profile: string;
    parentId: string | null;
    subTask: Record<string, unknown>;
    ownerId: string;
    cost: CostInputs;
    origin?: string;
    /** The end user and the memory stores mounted; a delegated run without an end user of its own acts for its parent's. */
    memory?: { endUserId: string | null; stores: ReadonlyArray<{ name: string; access: 'read' | 'read_write' }> | null };
    /** Posted to a busy session: recorded `queued`, with how it was posted (multitask.ts). */
    queued?: 'enqueue' | 'interrupt';
  },
): Promise<boolean> {
  const endUser = r.memory?.endUserId ?? (r.parentId !== null ? sql<string | null>`(select p.end_user_id from runs p where p.id = ${r.parentId})` : null);
  const insert = tx
    .insertInto('runs')
    .values({
      id: r.id,
      tenant_id: r.tenantId,
      session_id: r.sessionId,
      profile: r.profile,
      parent_id: r.parentId,
      sub_task: jsonb(r.subTask),
      status: r.queued ? 'queued' : 'running',
      multitask: r.queued ?? null,
      owner_id: r.ownerId,
      runtime: r.cost.runtime,
      model: r.cost.model,
      key_source: r.cost.keySource,
      origin: r.origin ?? null,
      end_user_id: endUser,
      memory_stores: r.memory?.stores?.length ? jsonb(r.memory.stores) : null,
    });
  try {
    await insert.execute();
    return true;
  } catch (err) {
    const e = err as { code?: string; constraint_name?: string };
    if (e.code === '23505' && e.constraint_name === 'runs_pkey') return false;
    throw err;
  }
}

export async function getRun(tx: Tx, id: string): Promise<RunRow | undefined> {
  return tx.selectFrom('runs').select(COLUMNS).where('id', '=', id).executeTakeFirst() as Promise<RunRow | undefined>;
}

/** A run with whether it waits for an approval, for its summary. */
export async function getRunShown(tx: Tx, id: string): Promise<(RunRow & { waiting: boolean }) | undefined> {
  return tx.selectFrom('runs').select(COLUMNS).select((eb) => waitingOf(eb).as('waiting')).where('id', '=', id).executeTakeFirst() as Promise<(RunRow & { waiting: boolean }) | undefined>;
}

export async function listRuns(tx: Tx, filter: { profile?: string; sessionId?: string; status?: ShownRunStatus }, page: Page): Promise<{ items: RunSummary[]; total: number }> {
  let q = tx.selectFrom('runs');
  if (filter.profile !== undefined) q = q.where('profile', '=', filter.profile);
  if (filter.sessionId !== undefined) q = q.where('session_id', '=', filter.sessionId);
  if (filter.status === 'waiting') q = q.where('status', '=', 'running').where((eb) => waitingOf(eb));
  else if (filter.status === 'running') q = q.where('status', '=', 'running').where((eb) => eb.not(waitingOf(eb)));
  else if (filter.status !== undefined) q = q.where('status', '=', filter.status);
  let rows = q.select(COLUMNS).select((eb) => waitingOf(eb).as('waiting')).orderBy('started_at', 'desc').orderBy('id', 'desc');
  if (page.limit !== undefined) rows = rows.limit(page.limit).offset(page.offset);
  const items = ((await rows.execute()) as Array<RunRow & { waiting: boolean }>).map(toSummary);
  const total = page.limit === undefined ? items.length : Number((await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  return { items, total };
}

/** Moves a running run to a final status; a run that already left `running` (e.g. cancelled) keeps its status. */
export async function finishRun(tx: Tx, id: string, status: Exclude<RunStatus, 'running' | 'queued'>): Promise<boolean> {
  const row = await tx.updateTable('runs').set({ status, finished_at: new Date() }).where('id', '=', id).where('status', '=', 'running').returning('id').executeTakeFirst();
  return row !== undefined;
}

/**
 * finishRun that also answers the run's facts for its runFinished hook (hooks/run-finished.repo.ts), read by the same
 * statement: the row as it ends and the usage sums of its logged `usage` events (those written earlier in the same
 * transaction included). Undefined when the run already left `running`.
 */
export async function endRunning(tx: Tx, tenantId: string, id: string, status: Exclude<RunStatus, 'running' | 'queued'>): Promise<RunFinished | undefined> {
  const { rows } = await sql<RunFinishedRow>`
    update runs r set status = ${status}, finished_at = ${new Date()}
      from (select ${usageSums()} from run_events e where e.tenant_id = ${tenantId} and e.run_id = ${id} and e.event->>'type' = 'usage') u
     where r.tenant_id = ${tenantId} and r.id = ${id} and r.status = 'running'
    returning r.id, r.tenant_id, r.profile, r.session_id, r.parent_id, r.status, r.started_at, r.finished_at, r.runtime, r.model, r.key_source,
              r.origin, u.input, u.output, u.cache_read, u.cache_write`.execute(tx);
  return toRunFinished(rows[0]);
}

export async function eventsAfter(tx: Tx, runId: string, afterSeq: number): Promise<StoredEvent[]> {
  const rows = await tx.selectFrom('run_events').select(['seq', 'event']).where('run_id', '=', runId).where('seq', '>', afterSeq).orderBy('seq').execute();
  // events stored under an older name replay under today's (contracts/run-event.ts)
  return rows.map((r) => ({ seq: r.seq, event: currentEvent(r.event as unknown as RunEvent) }));
}

/**
 * The runtime session id a run's events belong to: the one its `session_init` event reported, else (that event has
 * not arrived yet) the one its session last recorded, which a resumed session keeps.
 */
export async function runtimeSessionIdOf(tx: Tx, runId: string): Promise<string | null> {
  const { rows } = await sql<{ id: string | null }>`
    select coalesce(
      (select e.event->>'runtimeSessionId' from run_events e
        where e.run_id = ${runId} and e.event->>'type' = 'session_init' and e.event->>'runtimeSessionId' is not null order by e.seq limit 1),
      (select s.runtime_session_id from runs r join sessions s on s.id = r.session_id where r.id = ${runId})
    ) as id`.execute(tx);
  return rows[0]?.id ?? null;
}

/** The type of a run's first stored event (system scope, so the tenant is named). */
export async function firstEventType(tx: Tx, tenantId: string, runId: string): Promise<string | undefined> {
  const row = await tx.selectFrom('run_events').select(sql<string>`event->>'type'`.as('type')).where('tenant_id', '=', tenantId).where('run_id', '=', runId).where('seq', '=', 1).executeTakeFirst();
  return row?.type;
}

/** Names the tenant as well: the orphan sweep calls it in system scope, where row security does not narrow the ids. */
export async function lastSeq(tx: Tx, tenantId: string, runId: string): Promise<number> {
  const row = await tx.selectFrom('run_events').select((eb) => eb.fn.max<number>('seq').as('m')).where('tenant_id', '=', tenantId).where('run_id', '=', runId).executeTakeFirst();
  return Number(row?.m ?? 0);
}

/**
 * Runs still `running` and not parked whose owner holds no live lease (system scope), as seen by conductor `self`. Its own runs count
 * only with `includeSelf` (at boot, when it cannot be driving any); otherwise never: a conductor that is alive drives
 * its runs even when its own heartbeat ran late, so it must not end them under itself.
 */
export async function orphanedRuns(
  tx: Tx,
  self: string,
  includeSelf: boolean,
): Promise<Array<{ id: string; tenant_id: string; session_id: string; owner_id: string; runner_url: string | null; resumed_from: number }>> {
  return tx
    .selectFrom('runs')
    .leftJoin('sessions as s', 's.id', 'runs.session_id')
    .select(['runs.id', 'runs.tenant_id', 'runs.session_id', 'runs.owner_id', 's.runner_url', 'runs.resumed_from'])
    .where('runs.status', '=', 'running')
    // a parked run is driven by no conductor on purpose: its decision resumes it (parking.ts)
    .where('runs.parked_approval', 'is', null)
    .where((eb) => {
      const leaseExpired = eb.not(eb.exists(eb.selectFrom('conductor_leases as l').select(sql`1`.as('x')).whereRef('l.owner_id', '=', 'runs.owner_id').where('l.expires_at', '>', sql<Date>`now()`)));
      return includeSelf ? eb.or([leaseExpired, eb('runs.owner_id', '=', self)]) : eb.and([leaseExpired, eb('runs.owner_id', '<>', self)]);
    })
    .execute();
}

/**
 * Appends events to the durable log; an event already stored (same tenant, run and seq) is left as it is.
 *
 * One statement for a whole batch whatever its size: the rows go as one JSON array (one JSON.stringify, parsed once by
 * the server), so the SQL text is the same for every batch and is prepared once, instead of a multi-row VALUES list
 * whose text and parameter count change with every batch size of the group commit. Its strings are in the storage
 * encoding (storable.ts), as jsonb() writes them: an event holding a NUL or a lone surrogate is stored like any other.
 */
export async function appendEvents(tx: Tx, tenantId: string, rows: ReadonlyArray<{ runId: string; seq: number; event: RunEvent }>): Promise<void> {
  if (rows.length === 0) return;
  const batch = storableJson(rows.map((r) => ({ r: r.runId, s: r.seq, e: r.event })));
  await sql`
    insert into run_events (tenant_id, run_id, seq, event)
    select ${tenantId}, t.r, t.s, t.e from jsonb_to_recordset(cast(cast(${batch} as text) as jsonb)) as t(r text, s integer, e jsonb)
    on conflict (tenant_id, run_id, seq) do nothing`.execute(tx);
}
