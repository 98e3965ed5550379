import { sql } from 'kysely';
import type { Tx } from '../../../db/index.ts';
import type { RunFinished } from './run-hooks.ts';

/**
 * The facts of a finished run, read inside the transaction that ended it (tenant or system scope, so every query names
 * the tenant). Usage is the sum of the run's `usage` events in the durable log.
 */
export async function readRunFinished(tx: Tx, tenantId: string, runId: string): Promise<RunFinished | undefined> {
  // one statement: the run row and its usage sums (a lateral aggregate over its `usage` events)
  const { rows } = await sql<RunFinishedRow>`
    select r.id, r.tenant_id, r.profile, r.session_id, r.parent_id, r.status, r.started_at, r.finished_at, r.runtime, r.model, r.key_source,
           r.origin, u.input, u.output, u.cache_read, u.cache_write
      from runs r
      cross join lateral (
        select ${usageSums()}
          from run_events e
         where e.tenant_id = r.tenant_id and e.run_id = r.id and e.event->>'type' = 'usage') u
     where r.tenant_id = ${tenantId} and r.id = ${runId}`.execute(tx);
  return toRunFinished(rows[0]);
}

/** The columns of a run's facts, as readRunFinished and the run's end (runs.repo.ts endRunning) select them. */
export interface RunFinishedRow {
  id: string;
  tenant_id: string;
  profile: string;
  session_id: string;
  parent_id: string | null;
  status: RunFinished['status'] | 'running';
  started_at: Date | string;
  finished_at: Date | string | null;
  runtime: string | null;
  model: string | null;
  key_source: RunFinished['cost']['keySource'];
  origin: string | null;
  input: string;
  output: string;
  cache_read: string;
  cache_write: string;
}

/** The usage sums of a run's `usage` events: `input`, `output`, `cache_read`, `cache_write` of alias `e`. */
export const usageSums = () => {
  const tokens = (field: string) => sql`coalesce(sum((e.event->'usage'->>${field})::bigint), 0)`;
  return sql`${tokens('inputTokens')} as input, ${tokens('outputTokens')} as output, ${tokens('cacheReadTokens')} as cache_read, ${tokens('cacheCreateTokens')} as cache_write`;
};

export function toRunFinished(run: RunFinishedRow | undefined): RunFinished | undefined {
  if (!run || run.status === 'running') return undefined;
  const usage = run;
  return {
    runId: run.id,
    tenantId: run.tenant_id,
    profile: run.profile,
    sessionId: run.session_id,
    parentId: run.parent_id,
    status: run.status,
    startedAt: new Date(run.started_at).toISOString(),
    finishedAt: new Date(run.finished_at ?? new Date()).toISOString(),
    usage: { input: Number(usage.input), output: Number(usage.output), cacheRead: Number(usage.cache_read), cacheWrite: Number(usage.cache_write) },
    cost: { model: run.model, runtime: run.runtime, keySource: run.key_source },
    origin: run.origin,
  };
}
