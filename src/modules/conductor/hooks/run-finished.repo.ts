import { sql } from 'kysely';
import type { Tx } from '../../../db/index.ts';
import type { RunFinished } from './run-hooks.ts';

/**
 * The facts of a finished run, read inside the transaction that ended it (tenant or system scope, so every query names
 * the tenant). Usage is the sum of the run's `usage` events in the durable log.
 */
export async function readRunFinished(tx: Tx, tenantId: string, runId: string): Promise<RunFinished | undefined> {
  const run = await tx
    .selectFrom('runs')
    .select(['id', 'tenant_id', 'profile', 'session_id', 'parent_id', 'status', 'started_at', 'finished_at', 'runtime', 'model', 'key_source', 'origin'])
    .where('tenant_id', '=', tenantId)
    .where('id', '=', runId)
    .executeTakeFirst();
  if (!run || run.status === 'running') return undefined;
  const tokens = (field: string) => sql<string>`coalesce(sum((event->'usage'->>${field})::bigint), 0)`;
  const usage = await tx
    .selectFrom('run_events')
    .select([tokens('inputTokens').as('input'), tokens('outputTokens').as('output'), tokens('cacheReadTokens').as('cache_read'), tokens('cacheCreateTokens').as('cache_write')])
    .where('tenant_id', '=', tenantId)
    .where('run_id', '=', runId)
    .where(sql<string>`event->>'type'`, '=', 'usage')
    .executeTakeFirstOrThrow();
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
