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
 * `sandboxOf`: the new session shares the sandbox (its `/work`) of that session of the tenant, so it is placed on the
 * runner that holds that one (a /v1 subagent of a hosted environment works in its parent's files).
 */
export interface PlaceOptions {
  sandboxOf?: string;
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

export async function createSessionFor(deps: SessionDeps, tenantId: string, profile: ProfileSpec, opts: PlaceOptions = {}): Promise<PlacedSession> {
  const opened = await openSessionOnRunner(deps, tenantId, profile, opts);
  await withTenant(deps.db, tenantId, (tx) => insertSession(tx, opened.row));
  return opened;
}

/**
 * The runner half of createSessionFor: the session exists on a runner; `row` is what the caller records, in a
 * transaction of its own choosing (run creation records it together with the run, as already running).
 */
export async function openSessionOnRunner(deps: SessionDeps, tenantId: string, profile: ProfileSpec, opts: PlaceOptions = {}): Promise<PlacedSession & { row: NewSessionRow }> {
  const runner = opts.sandboxOf ? await holderOf(deps, tenantId, opts.sandboxOf) : deps.fleet.pick();
  if (!runner) throw unavailable('no live runner');
  assertCommandSandbox([runner.info], profile.tools);
  const share = opts.sandboxOf ? { sandboxOf: opts.sandboxOf } : undefined;
  let sessionId: string;
  try {
    // the runner may not have seen the profile yet: it comes with the request (one call, not two)
    sessionId = await runner.client.createSession(tenantId, profile.name, profile, share).catch(async (err: unknown) => {
      if (!(err instanceof CallError && err.status === 404) || share) throw err;
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
/** The 409 of a run posted to a session that has one in progress (and `multitask: "reject"`, the default). */
export const SESSION_BUSY = 'session busy: a run is in progress on this session';

export async function resumeSession(deps: SessionDeps, tenantId: string, sessionId: string, profileName?: string): Promise<PlacedSession> {
  const row = await readRow(deps, tenantId, sessionId);
  if (profileName !== undefined && row.profile !== profileName) {
    throw conflict(`session ${sessionId} belongs to profile "${row.profile}", not "${profileName}"; run profile ${row.profile} on it or omit the session`);
  }
  if (row.status === 'running') throw conflict(SESSION_BUSY);
  return { sessionId, runner: await holdSession(deps, tenantId, row), created: false };
}

/**
 * The runner that holds the session now, hydrating it first when its runner lost it (restarted, or replaced by
 * another): what the /v1 agents API asks before it looks into a session's sandbox between runs. A running session
 * is fine here (nothing is claimed). `sandboxOf` as for createSessionFor: the session is held where that one is.
 */
export async function placeSession(deps: SessionDeps, tenantId: string, sessionId: string, opts: PlaceOptions = {}): Promise<FleetMember> {
  return holdSession(deps, tenantId, await readRow(deps, tenantId, sessionId), opts);
}

async function readRow(deps: SessionDeps, tenantId: string, sessionId: string) {
  let row;
  try {
    row = await withTenant(deps.db, tenantId, (tx) => getSessionRow(tx, sessionId));
  } catch (err) {
    throw new AppError(503, 'reading the session failed', { cause: err });
  }
  if (!row || row.status === 'shutdown') throw notFound(`unknown session: ${sessionId}`);
  return row;
}

/** The healthy runner holding the session `sessionId` (the one a sandbox-sharing session must live beside). */
async function holderOf(deps: SessionDeps, tenantId: string, sessionId: string): Promise<FleetMember> {
  const row = await readRow(deps, tenantId, sessionId);
  const member = deps.fleet.byUrl(row.runner_url);
  if (!member?.healthy) throw unavailable(`the runner holding session ${sessionId} is not reachable`);
  return member;
}

async function holdSession(deps: SessionDeps, tenantId: string, row: NonNullable<Awaited<ReturnType<typeof readRow>>>, opts: PlaceOptions = {}): Promise<FleetMember> {
  const sessionId = row.id;
  const beside = opts.sandboxOf ? await holderOf(deps, tenantId, opts.sandboxOf) : undefined;
  const current = deps.fleet.byUrl(row.runner_url);
  if (current?.healthy && (!beside || beside === current)) {
    try {
      await current.client.getSession(tenantId, sessionId);
      return current;
    } catch (err) {
      if (!(err instanceof CallError && err.status === 404)) throw upstream(err, 'the runner holding the session failed');
      // The runner restarted and lost the live session: hydrate it again below.
    }
  }
  const target = beside ?? (current?.healthy ? current : deps.fleet.pick());
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
      ...(opts.sandboxOf ? { sandboxOf: opts.sandboxOf } : {}),
    });
    await withTenant(deps.db, tenantId, (tx) => setSessionRunner(tx, sessionId, target.url));
  } catch (err) {
    throw new AppError(503, `hydrating the session failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  deps.log.info('session hydrated', { sessionId, runner: target.url });
  return target;
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
