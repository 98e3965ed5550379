import { sql, type Kysely } from 'kysely';
import type { DB, Tx } from '../../../db/index.ts';
import { jsonb } from '../../../db/index.ts';
import { shownStatus, waitingOf } from '../runs/index.ts';

/** SQL of published_agents, agent_keys and chat_conversations (0013). */
const PUBLISHED_COLUMNS = [
  'id', 'tenant_id', 'profile_name', 'slug', 'visibility', 'auth_mode', 'allowed_origins', 'rate_limit_rpm', 'sync_max_duration_seconds',
  'conversation_ttl_days', 'expose_tool_events', 'approvals', 'enabled', 'monthly_cost_cap_usd_cents', 'jwks_url', 'jwt_issuer',
] as const;

export type PublishedRow = NonNullable<Awaited<ReturnType<typeof selectActiveByProfile>>>;

export interface PublishedFields {
  visibility?: 'private' | 'org' | 'public';
  auth_mode?: 'api_key' | 'jwt';
  allowed_origins?: string[];
  rate_limit_rpm?: number;
  sync_max_duration_seconds?: number;
  conversation_ttl_days?: number | null;
  expose_tool_events?: boolean;
  approvals?: 'deny' | 'owner';
  enabled?: boolean;
  monthly_cost_cap_usd_cents?: number | null;
  jwks_url?: string | null;
  jwt_issuer?: string | null;
}

export function selectActiveByProfile(tx: Tx, profileName: string) {
  return tx.selectFrom('published_agents').select(PUBLISHED_COLUMNS).where('profile_name', '=', profileName).where('deleted_at', 'is', null).executeTakeFirst();
}

export function selectActiveBySlug(tx: Tx, slug: string) {
  return tx.selectFrom('published_agents').select(PUBLISHED_COLUMNS).where('slug', '=', slug).where('deleted_at', 'is', null).executeTakeFirst();
}

export function selectActive(tx: Tx) {
  return tx.selectFrom('published_agents').select(PUBLISHED_COLUMNS).where('deleted_at', 'is', null).orderBy('created_at').orderBy('id').execute();
}

/** Undefined when the slug or the profile is already published (the partial unique indexes). */
export function insertPublished(tx: Tx, row: { id: string; tenant_id: string; profile_name: string; slug: string } & PublishedFields) {
  const { allowed_origins, ...rest } = row;
  return tx
    .insertInto('published_agents')
    .values({ ...rest, ...(allowed_origins !== undefined ? { allowed_origins: jsonb(allowed_origins) } : {}) })
    .onConflict((oc) => oc.doNothing())
    .returning(PUBLISHED_COLUMNS)
    .executeTakeFirst();
}

export function updatePublished(tx: Tx, id: string, fields: PublishedFields) {
  const { allowed_origins, ...rest } = fields;
  return tx
    .updateTable('published_agents')
    .set({ ...rest, ...(allowed_origins !== undefined ? { allowed_origins: jsonb(allowed_origins) } : {}), updated_at: new Date() })
    .where('id', '=', id)
    .returning(PUBLISHED_COLUMNS)
    .executeTakeFirstOrThrow();
}

export async function softDeletePublished(tx: Tx, id: string): Promise<void> {
  await tx.updateTable('published_agents').set({ deleted_at: new Date() }).where('id', '=', id).execute();
}

const KEY_COLUMNS = ['id', 'published_id', 'label', 'key_prefix', 'created_at', 'expires_at', 'revoked_at'] as const;

export function insertAgentKey(tx: Tx, k: { id: string; tenant_id: string; published_id: string; label: string; key_hash: string; key_prefix: string; created_by: string | null; expires_at: Date | null }) {
  return tx.insertInto('agent_keys').values(k).returning(KEY_COLUMNS).executeTakeFirstOrThrow();
}

export function selectAgentKeys(tx: Tx, publishedId: string) {
  return tx.selectFrom('agent_keys').select(KEY_COLUMNS).where('published_id', '=', publishedId).orderBy('created_at', 'desc').orderBy('id').execute();
}

/** True when the key existed on that published agent. */
export async function revokeAgentKey(tx: Tx, publishedId: string, id: string): Promise<boolean> {
  const row = await tx.selectFrom('agent_keys').select(['id', 'revoked_at']).where('id', '=', id).where('published_id', '=', publishedId).executeTakeFirst();
  if (!row) return false;
  if (!row.revoked_at) await tx.updateTable('agent_keys').set({ revoked_at: new Date() }).where('id', '=', id).execute();
  return true;
}

/** In a key-lookup transaction (withKeyLookup): the one key with this hash, whatever its tenant. */
export function selectAgentKeyByHash(tx: Tx, hash: string) {
  return tx.selectFrom('agent_keys').select(['id', 'tenant_id', 'published_id', 'expires_at', 'revoked_at']).where('key_hash', '=', hash).executeTakeFirst();
}

export function insertConversation(tx: Tx, c: { id: string; tenant_id: string; published_id: string; owner: string; session_id: string }) {
  return tx.insertInto('chat_conversations').values(c).execute();
}

export function selectConversation(tx: Tx, id: string) {
  return tx.selectFrom('chat_conversations').select(['id', 'published_id', 'owner', 'session_id']).where('id', '=', id).executeTakeFirst();
}

export async function touchConversation(tx: Tx, id: string): Promise<void> {
  await tx.updateTable('chat_conversations').set({ last_active_at: new Date() }).where('id', '=', id).execute();
}

/** The gateway's lookup before any tenant is known: the active published agent at `slug`, whatever its tenant. */
export function lookupBySlug(db: Kysely<DB>, slug: string) {
  return db.transaction().execute(async (tx) => {
    await sql`select set_config('app.chat_slug', ${slug}, true)`.execute(tx);
    return selectActiveBySlug(tx, slug);
  });
}

/** In a system transaction (withSystem): deletes every conversation idle longer than its agent's conversationTtlDays. */
export async function deleteExpiredConversations(tx: Tx): Promise<number> {
  const res = await sql`
    delete from chat_conversations c using published_agents p
    where c.published_id = p.id and p.conversation_ttl_days is not null
      and c.last_active_at < now() - make_interval(days => p.conversation_ttl_days)`.execute(tx);
  return Number(res.numAffectedRows ?? 0);
}

/** A conversation's turns: the runs of its session (read only: the runs feature owns them) with their final event. */
export async function selectTurns(tx: Tx, sessionId: string) {
  const runs = await tx
    .selectFrom('runs')
    .select(['id', 'sub_task', 'status', 'started_at'])
    // a running run that a pending approval holds shows as waiting, as /api/runs shows it
    .select((eb) => waitingOf(eb).as('waiting'))
    .where('session_id', '=', sessionId)
    .orderBy('started_at')
    .orderBy('id')
    .execute();
  if (runs.length === 0) return [];
  const ends = await tx
    .selectFrom('run_events')
    .select(['run_id', 'event'])
    .where('run_id', 'in', runs.map((r) => r.id))
    .where(sql<string>`event->>'type'`, 'in', ['result', 'error'])
    .execute();
  const endOf = new Map(ends.map((e) => [e.run_id, e.event as { type: string; message?: string }]));
  return runs.map((r) => ({ id: r.id, prompt: (r.sub_task as { prompt?: string }).prompt ?? '', status: shownStatus(r.status, r.waiting), startedAt: r.started_at, end: endOf.get(r.id) }));
}

export async function insertTurn(tx: Tx, t: { run_id: string; tenant_id: string; published_id: string; conversation_id: string }): Promise<void> {
  await tx.insertInto('chat_turns').values(t).execute();
}

/**
 * The tokens of the agent's gateway runs this calendar month (UTC), by the model and runtime that price them (the
 * runs' `usage` events, as billing and /api/usage read them; a run in flight counts what it has used so far).
 */
export async function monthUsageByModel(tx: Tx, publishedId: string): Promise<Array<{ model: string | null; runtime: string | null; input: number; output: number; cacheRead: number; cacheWrite: number }>> {
  const { rows } = await sql<{ model: string | null; runtime: string | null; input: string; output: string; cache_read: string; cache_write: string }>`
    select r.model, r.runtime,
      coalesce(sum((e.event->'usage'->>'inputTokens')::bigint), 0)::text as input,
      coalesce(sum((e.event->'usage'->>'outputTokens')::bigint), 0)::text as output,
      coalesce(sum((e.event->'usage'->>'cacheReadTokens')::bigint), 0)::text as cache_read,
      coalesce(sum((e.event->'usage'->>'cacheCreateTokens')::bigint), 0)::text as cache_write
    from chat_turns t
      join runs r on r.tenant_id = t.tenant_id and r.id = t.run_id
      join run_events e on e.tenant_id = t.tenant_id and e.run_id = t.run_id and e.event->>'type' = 'usage'
    where t.published_id = ${publishedId} and t.created_at >= date_trunc('month', now() at time zone 'utc') at time zone 'utc'
    group by r.model, r.runtime`.execute(tx);
  return rows.map((r) => ({ model: r.model, runtime: r.runtime, input: Number(r.input), output: Number(r.output), cacheRead: Number(r.cache_read), cacheWrite: Number(r.cache_write) }));
}

export interface MetricsBucketRow {
  start: Date;
  end: Date;
  runs: string;
  running: string;
  input: string;
  output: string;
  cache_read: string;
  cache_create: string;
  cost_micro: string;
}

/** The agent's gateway runs in [since, until) per bucket: runs, running runs, usage tokens and charges. */
export async function selectMetricBuckets(tx: Tx, publishedId: string, since: Date, until: Date, bucketSeconds: number): Promise<MetricsBucketRow[]> {
  const step = sql`make_interval(secs => ${bucketSeconds})`;
  const { rows } = await sql<MetricsBucketRow>`
    with b as (
      select gs as start, gs + ${step} as "end" from generate_series(${since}::timestamptz, ${until}::timestamptz - ${step}, ${step}) gs
    ), t as (
      select t.run_id, t.created_at, r.status from chat_turns t join runs r on r.id = t.run_id
      where t.published_id = ${publishedId} and t.created_at >= ${since} and t.created_at < ${until}
    ), u as (
      select e.run_id,
        sum(coalesce((e.event->'usage'->>'inputTokens')::bigint, 0)) as input,
        sum(coalesce((e.event->'usage'->>'outputTokens')::bigint, 0)) as output,
        sum(coalesce((e.event->'usage'->>'cacheReadTokens')::bigint, 0)) as cache_read,
        sum(coalesce((e.event->'usage'->>'cacheCreateTokens')::bigint, 0)) as cache_create
      from run_events e where e.run_id in (select run_id from t) and e.event->>'type' = 'usage' group by e.run_id
    ), c as (
      select run_id, sum(-amount_micro_usd) as micro from credit_ledger where kind = 'charge' and run_id in (select run_id from t) group by run_id
    )
    select b.start, b."end", count(t.run_id)::text as runs, (count(t.run_id) filter (where t.status = 'running'))::text as running,
      coalesce(sum(u.input), 0)::text as input, coalesce(sum(u.output), 0)::text as output,
      coalesce(sum(u.cache_read), 0)::text as cache_read, coalesce(sum(u.cache_create), 0)::text as cache_create,
      coalesce(sum(c.micro), 0)::text as cost_micro
    from b left join t on t.created_at >= b.start and t.created_at < b."end"
      left join u on u.run_id = t.run_id left join c on c.run_id = t.run_id
    group by b.start, b."end" order by b.start`.execute(tx);
  return rows;
}

export async function countConversations(tx: Tx, publishedId: string, since: Date, until: Date): Promise<number> {
  const { rows } = await sql<{ n: string }>`
    select count(distinct conversation_id)::text as n from chat_turns where published_id = ${publishedId} and created_at >= ${since} and created_at < ${until}`.execute(tx);
  return Number(rows[0]?.n ?? 0);
}

/** Every run of the tenant in [since, until) per bucket (the tenant-wide time series), with the gateway's turns. */
export async function selectTenantBuckets(tx: Tx, since: Date, until: Date, bucketSeconds: number) {
  const step = sql`make_interval(secs => ${bucketSeconds})`;
  const { rows } = await sql<MetricsBucketRow & { failed: string; queued: string; ingress: string; waiting: string }>`
    with b as (
      select gs as start, gs + ${step} as "end" from generate_series(${since}::timestamptz, ${until}::timestamptz - ${step}, ${step}) gs
    ), t as (
      select r.id as run_id, r.started_at as created_at, r.status,
        -- a running run with a pending approval is waiting (sql/0028_approvals.sql)
        exists(select 1 from approvals a where a.tenant_id = r.tenant_id and a.run_id = r.id and a.status = 'pending') as waiting
      from runs r where r.started_at >= ${since} and r.started_at < ${until}
    ), u as (
      select e.run_id,
        sum(coalesce((e.event->'usage'->>'inputTokens')::bigint, 0)) + sum(coalesce((e.event->'usage'->>'outputTokens')::bigint, 0)) as tokens
      from run_events e where e.run_id in (select run_id from t) and e.event->>'type' = 'usage' group by e.run_id
    ), c as (
      select run_id, sum(-amount_micro_usd) as micro from credit_ledger where kind = 'charge' and run_id in (select run_id from t) group by run_id
    ), g as (
      select created_at from chat_turns where created_at >= ${since} and created_at < ${until}
    )
    select b.start, b."end", count(t.run_id)::text as runs, (count(t.run_id) filter (where t.status = 'running' and not t.waiting))::text as running,
      (count(t.run_id) filter (where t.status = 'running' and t.waiting))::text as waiting,
      (count(t.run_id) filter (where t.status = 'error'))::text as failed,
      (count(t.run_id) filter (where t.status = 'queued'))::text as queued,
      coalesce(sum(u.tokens), 0)::text as input, '0' as output, '0' as cache_read, '0' as cache_create,
      coalesce(sum(c.micro), 0)::text as cost_micro,
      (select count(*) from g where g.created_at >= b.start and g.created_at < b."end")::text as ingress
    from b left join t on t.created_at >= b.start and t.created_at < b."end"
      left join u on u.run_id = t.run_id left join c on c.run_id = t.run_id
    group by b.start, b."end" order by b.start`.execute(tx);
  return rows;
}

/** The origin of the chat gateway's runs (runs.origin): their approvals follow the published agent's `approvals`. */
export const CHAT_ORIGIN = 'chat';

/**
 * Who approves a call of run `runId` to an `ask` tool, when the run is a chat gateway's: its published agent's
 * `approvals` (`deny` when the agent is gone, or while the run's chat turn is not recorded yet); undefined for any
 * other run.
 */
export async function chatApprovalsOfRun(tx: Tx, runId: string): Promise<'deny' | 'owner' | undefined> {
  const run = await tx.selectFrom('runs').select('origin').where('id', '=', runId).executeTakeFirst();
  if (run?.origin !== CHAT_ORIGIN) return undefined;
  const agent = await tx
    .selectFrom('chat_turns')
    .innerJoin('published_agents', 'published_agents.id', 'chat_turns.published_id')
    .select('published_agents.approvals')
    .where('chat_turns.run_id', '=', runId)
    .executeTakeFirst();
  return agent?.approvals ?? 'deny';
}
