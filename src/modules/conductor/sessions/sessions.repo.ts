import type { Tx } from '../../../db/index.ts';
import { jsonb } from '../../../db/index.ts';
import type { Page } from '../../crud/index.ts';
import { AGENT_SESSION_PROFILE_PREFIX } from '../../../shared/ids.ts';

/** SQL for durable session rows and their saved state bundles. */
export interface SessionRecord {
  id: string;
  profile: string;
  /** `v1`: a session of the /v1 agents API, whose profile is its agent's private snapshot (not in /api/profiles). */
  origin: 'api' | 'v1';
  runtime: string;
  status: 'idle' | 'running' | 'errored' | 'shutdown';
  createdAt: string;
  lastUsedAt: string;
  lastPrompt: string | null;
  lastRunStatus: string | null;
  runCount: number;
  /**
   * What the runner and runtime know the session by: `runtimeSessionId`, the runtime's own id of the conversation, once a
   * run reported it (seed 000, "Events": the conductor stream leaves it out; the session row's metadata carries it).
   */
  metadata: { runtimeSessionId: string | null };
}

const COLUMNS = ['id', 'tenant_id', 'profile', 'runtime', 'status', 'runner_url', 'runtime_session_id', 'profile_snapshot', 'last_prompt', 'last_run_status', 'run_count', 'created_at', 'last_used_at'] as const;
export type SessionRow = Awaited<ReturnType<typeof getSessionRow>> & {};

export const toRecord = (r: NonNullable<SessionRow>): SessionRecord => ({
  id: r.id,
  profile: r.profile,
  origin: r.profile.startsWith(AGENT_SESSION_PROFILE_PREFIX) ? 'v1' : 'api',
  runtime: r.runtime,
  status: r.status,
  createdAt: new Date(r.created_at).toISOString(),
  lastUsedAt: new Date(r.last_used_at).toISOString(),
  lastPrompt: r.last_prompt,
  lastRunStatus: r.last_run_status,
  runCount: r.run_count,
  metadata: { runtimeSessionId: r.runtime_session_id ?? null },
});

export async function getSessionRow(tx: Tx, id: string) {
  return tx.selectFrom('sessions').select(COLUMNS).where('id', '=', id).executeTakeFirst();
}

export interface NewSessionRow {
  id: string;
  tenantId: string;
  profile: string;
  runtime: string;
  runnerUrl: string;
  snapshot: Record<string, unknown>;
}

/** Records a new session; with `running`, already claimed by a run (what markSessionRunning would set), in one statement. */
export async function insertSession(tx: Tx, s: NewSessionRow, running?: { prompt: string | null }): Promise<void> {
  await tx
    .insertInto('sessions')
    .values({
      id: s.id,
      tenant_id: s.tenantId,
      profile: s.profile,
      runtime: s.runtime,
      runner_url: s.runnerUrl,
      profile_snapshot: jsonb(s.snapshot),
      ...(running ? { status: 'running', last_prompt: running.prompt, last_used_at: new Date() } : {}),
    })
    .execute();
}

export interface SessionFilter {
  /** A substring of the session id or profile name. */
  q?: string;
  /** Exactly this profile. */
  profile?: string;
  /** Leave out sessions that were shut down (the rail). */
  live?: boolean;
  /** Newest first by creation (the list) or by last use (the rail). */
  orderBy?: 'created_at' | 'last_used_at';
}

export async function listSessions(tx: Tx, filter: SessionFilter, page: Page): Promise<{ items: SessionRecord[]; total: number }> {
  const { q, profile } = filter;
  let base = tx.selectFrom('sessions');
  if (q) base = base.where((eb) => eb.or([eb('id', 'like', `%${escapeLike(q)}%`), eb('profile', 'like', `%${escapeLike(q)}%`)]));
  if (profile !== undefined) base = base.where('profile', '=', profile);
  if (filter.live) base = base.where('status', '<>', 'shutdown');
  let rows = base.select(COLUMNS).orderBy(filter.orderBy ?? 'created_at', 'desc').orderBy('id', 'desc');
  if (page.limit !== undefined) rows = rows.limit(page.limit).offset(page.offset);
  const items = (await rows.execute()).map(toRecord);
  const total = page.limit === undefined ? items.length : Number((await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  return { items, total };
}

function escapeLike(s: string): string {
  return s.replace(/[\\%_]/g, (m) => '\\' + m);
}

/** `unlessQueued`: a session whose queue holds runs stays theirs (a new run posted to it waits or is refused). */
export async function markSessionRunning(tx: Tx, id: string, prompt: string | null, opts: { unlessQueued?: boolean } = {}): Promise<boolean> {
  let q = tx
    .updateTable('sessions')
    .set({ status: 'running', last_prompt: prompt, last_used_at: new Date() })
    .where('id', '=', id)
    .where('status', 'in', ['idle', 'errored']);
  if (opts.unlessQueued) q = q.where((eb) => eb.not(eb.exists(eb.selectFrom('runs').select('runs.id').whereRef('runs.session_id', '=', 'sessions.id').where('runs.status', '=', 'queued'))));
  const row = await q
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

export async function finishSessionRun(tx: Tx, id: string, runStatus: string, runtimeSessionId: string | undefined): Promise<void> {
  await tx
    .updateTable('sessions')
    .set((eb) => ({
      status: runStatus === 'ok' || runStatus === 'cancelled' ? 'idle' : 'errored',
      last_run_status: runStatus,
      run_count: eb('run_count', '+', 1),
      last_used_at: new Date(),
      ...(runtimeSessionId ? { runtime_session_id: runtimeSessionId } : {}),
    }))
    .where('id', '=', id)
    .where('status', '=', 'running')
    .execute();
}

export async function saveState(tx: Tx, s: { sessionId: string; tenantId: string; contentType: string; runtimeSessionId: string; bundle: Uint8Array }): Promise<void> {
  await tx
    .insertInto('session_states')
    .values({ session_id: s.sessionId, tenant_id: s.tenantId, content_type: s.contentType, runtime_session_id: s.runtimeSessionId, bundle: s.bundle })
    .onConflict((oc) =>
      oc.column('session_id').doUpdateSet({ content_type: s.contentType, runtime_session_id: s.runtimeSessionId, bundle: s.bundle, updated_at: new Date() }),
    )
    .execute();
}

export async function loadState(tx: Tx, sessionId: string) {
  return tx.selectFrom('session_states').select(['content_type', 'runtime_session_id', 'bundle']).where('session_id', '=', sessionId).executeTakeFirst();
}

export async function setSessionRunner(tx: Tx, id: string, runnerUrl: string): Promise<void> {
  await tx.updateTable('sessions').set({ runner_url: runnerUrl }).where('id', '=', id).execute();
}

export async function markSessionShutdown(tx: Tx, id: string): Promise<void> {
  await tx.updateTable('sessions').set({ status: 'shutdown' }).where('id', '=', id).execute();
}

/** Frees a running session after a forced terminate; true when it was still claimed. */
export async function releaseCancelledSession(tx: Tx, id: string): Promise<boolean> {
  const released = await tx.updateTable('sessions').set({ status: 'idle', last_run_status: 'cancelled' }).where('id', '=', id).where('status', '=', 'running').returning('id').executeTakeFirst();
  return released !== undefined;
}
