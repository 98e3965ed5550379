import type { Kysely } from 'kysely';
import { assertCommandSandbox } from '../runners/sandbox-check.ts';
import type { DB } from '../../../db/index.ts';
import { withTenant, withTenantStatement } from '../../../db/index.ts';
import { CallError, type ProfileSpec } from '../../../contracts/runner.client.ts';
import { AppError, badRequest, conflict, notFound, unavailable } from '../../../shared/errors.ts';
import type { Logger } from '../../../shared/log.ts';
import type { Fleet, FleetMember } from '../runners/fleet.ts';
import { getSpec } from '../profiles/profiles.repo.ts';
import { getSessionRow, insertSession, loadState, markSessionRunning, markSessionShutdown, setSessionRunner, toRecord, type NewSessionRow, type SessionRecord } from './sessions.repo.ts';

/**
 * Where a run's session lives. A new session is created on a healthy runner; an existing one is reused on the runner
 * that holds it, or hydrated from its durable row and saved state bundle onto a live runner when that runner is gone
 * or restarted. The durable row records which runner serves it now.
 */
export interface SessionDeps {
  db: Kysely<DB>;
  fleet: Fleet;
  log: Logger;
}

export interface PlacedSession {
  sessionId: string;
  runner: FleetMember;
  created: boolean;
}

/**
 * `POST /api/sessions {profile}`: a session bound to a saved profile, idle, with no run (the chat gateway's first turn
 * opens one this way; a run names it with `sessionId`). An unknown profile is the runs' 400 `unknown_profile: <name>`.
 */
export async function openNamedSession(deps: SessionDeps, tenantId: string, profileName: string): Promise<SessionRecord> {
  const profile = (await withTenantStatement(deps.db, tenantId, (tx) => getSpec(tx, 'profiles', profileName))) as ProfileSpec | undefined;
  if (!profile) throw badRequest(`unknown_profile: ${profileName}`);
  const { sessionId } = await createSessionFor(deps, tenantId, profile);
  const row = await withTenant(deps.db, tenantId, (tx) => getSessionRow(tx, sessionId));
  return toRecord(row!);
}

export async function createSessionFor(deps: SessionDeps, tenantId: string, profile: ProfileSpec): Promise<PlacedSession> {
  const opened = await openSessionOnRunner(deps, tenantId, profile);
  await withTenant(deps.db, tenantId, (tx) => insertSession(tx, opened.row));
  return opened;
}

/**
 * The runner half of createSessionFor: the session exists on a runner; `row` is what the caller records, in a
 * transaction of its own choosing (run creation records it together with the run, as already running).
 */
export async function openSessionOnRunner(deps: SessionDeps, tenantId: string, profile: ProfileSpec): Promise<PlacedSession & { row: NewSessionRow }> {
  const runner = deps.fleet.pick();
  if (!runner) throw unavailable('no live runner');
  assertCommandSandbox([runner.info], profile.tools);
  let sessionId: string;
  try {
    // the runner may not have seen the profile yet: it comes with the request (one call, not two)
    sessionId = await runner.client.createSession(tenantId, profile.name, profile).catch(async (err: unknown) => {
      if (!(err instanceof CallError && err.status === 404)) throw err;
      // a runner from before the profile travelled with the session ignores it: store it the old way
      await runner.client.putProfile(tenantId, profile);
      return runner.client.createSession(tenantId, profile.name);
    });
  } catch (err) {
    throw upstream(err, 'creating the session on the runner failed');
  }
  const row = { id: sessionId, tenantId, profile: profile.name, runtime: profile.runtime, runnerUrl: runner.url, snapshot: profile as unknown as Record<string, unknown> };
  return { sessionId, runner, created: true, row };
}

/**
 * Rule 4 of run creation: reuse the live runner session, else hydrate; missing or shut-down → 404; infrastructure → 503.
 * `profileName`: the profile the caller means to run. A session belongs to one profile (its snapshot, its runtime
 * state); running another on it would use the session's model and record the run under the wrong name: 409.
 */
export async function resumeSession(deps: SessionDeps, tenantId: string, sessionId: string, profileName?: string): Promise<PlacedSession> {
  let row;
  try {
    row = await withTenant(deps.db, tenantId, (tx) => getSessionRow(tx, sessionId));
  } catch (err) {
    throw new AppError(503, 'reading the session failed', { cause: err });
  }
  if (!row || row.status === 'shutdown') throw notFound(`unknown session: ${sessionId}`);
  if (profileName !== undefined && row.profile !== profileName) {
    throw conflict(`session ${sessionId} belongs to profile "${row.profile}", not "${profileName}"; run profile ${row.profile} on it or omit the session`);
  }
  if (row.status === 'running') throw conflict('session busy: a run is in progress on this session');
  const current = deps.fleet.byUrl(row.runner_url);
  if (current?.healthy) {
    try {
      await current.client.getSession(tenantId, sessionId);
      return { sessionId, runner: current, created: false };
    } catch (err) {
      if (!(err instanceof CallError && err.status === 404)) throw upstream(err, 'the runner holding the session failed');
      // The runner restarted and lost the live session: hydrate it again below.
    }
  }
  const target = current?.healthy ? current : deps.fleet.pick();
  if (!target) throw unavailable('no live runner to hydrate the session on');
  const snapshot = row.profile_snapshot as unknown as ProfileSpec;
  try {
    const state = await withTenant(deps.db, tenantId, (tx) => loadState(tx, sessionId));
    await target.client.putProfile(tenantId, snapshot);
    await target.client.hydrate(tenantId, sessionId, {
      profileName: row.profile,
      runtimeSessionId: state?.runtime_session_id ?? row.runtime_session_id ?? '',
      stateContentType: state?.content_type ?? '',
      stateB64: state ? Buffer.from(state.bundle).toString('base64') : undefined,
    });
    await withTenant(deps.db, tenantId, (tx) => setSessionRunner(tx, sessionId, target.url));
  } catch (err) {
    throw new AppError(503, `hydrating the session failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  deps.log.info('session hydrated', { sessionId, runner: target.url });
  return { sessionId, runner: target, created: false };
}

/** Claims the session for a run; a session that is already running is busy (409). */
export async function claimSession(deps: SessionDeps, tenantId: string, sessionId: string, prompt: string | null): Promise<void> {
  const ok = await withTenant(deps.db, tenantId, (tx) => markSessionRunning(tx, sessionId, prompt));
  if (!ok) throw conflict('session busy: a run is in progress on this session');
}

export function upstream(err: unknown, what: string): AppError {
  if (err instanceof AppError) return err;
  const detail = err instanceof Error ? err.message : String(err);
  return new AppError(502, `${what}: ${detail}`, { cause: err });
}

/**
 * Ends a session: shuts it down on the runner that holds it (a runner that no longer knows it is fine) and marks the
 * durable row `shutdown`. With `dropProfile` the runner also forgets the session's profile (the /v1 agents API gives
 * every session a profile of its own).
 */
export async function shutdownSession(deps: SessionDeps, tenantId: string, sessionId: string, opts: { dropProfile?: boolean } = {}): Promise<void> {
  const row = await withTenant(deps.db, tenantId, (tx) => getSessionRow(tx, sessionId));
  if (!row) throw notFound(`unknown session: ${sessionId}`);
  const owner = deps.fleet.byUrl(row.runner_url);
  if (owner?.healthy) {
    await owner.client.deleteSession(tenantId, row.id).catch((err) => {
      if (!(err instanceof CallError && err.status === 404)) throw new AppError(502, `upstream runner failure: ${err.message}`);
    });
    if (opts.dropProfile) await owner.client.deleteProfile(tenantId, row.profile).catch(() => {});
  }
  await withTenant(deps.db, tenantId, (tx) => markSessionShutdown(tx, row.id));
}
