import * as v from 'valibot';
import { commitWithNext, sendWithNext, withTenant } from '../../../db/index.ts';
import type { SubTask, ProfileSpec } from '../../../contracts/runner.client.ts';
import { AppError, badRequest, notFound } from '../../../shared/errors.ts';
import { CLIENT_ID_PATTERN, prefixedId } from '../../../shared/ids.ts';
import type { Page } from '../../crud/index.ts';
import { openSessionOnRunner, resumeSession, SESSION_BUSY, type PlacedSession, type SessionDeps } from '../sessions/sessions.service.ts';
import { insertSession, markSessionRunning, type NewSessionRow } from '../sessions/sessions.repo.ts';
import { resolveSkills } from '../skills/index.ts';
import type { Ahead } from '../hooks/index.ts';
import type { DriverDeps, RunExtras } from './driver.ts';
import { appendEvents, getRunProfile, getRunShown, insertRun, listRuns, toSummary, type RunSummary, type ShownRunStatus } from './runs.repo.ts';
import { launchRun } from './launch.ts';
import { admitToQueue, interruptCurrent, parseMultitask, queuedEvent, startNextQueued, type Multitask } from './multitask.ts';
import { runKey, type ProviderKeys } from '../provider-keys/index.ts';
import { refusePrivateMcp } from './mcp-address.ts';
import type { PrivateAddresses } from '../../../shared/egress/index.ts';
import { assertProfileReady } from './readiness.ts';

/**
 * Runs: creation with the seed's rules 1-4 and 7 (a profile whose dependencies are not ready: 409), listing,
 * cooperative cancel and force-terminate. The run itself is driven in the background by driver.ts; the caller gets
 * 202 {runId, sessionId} as soon as the run row exists.
 */
export interface RunDeps extends DriverDeps, SessionDeps {
  /** True once this conductor is shutting down: it starts no queued run (the next conductor does). */
  queuePaused?: () => boolean;
  ownerId: string;
  mintRunToken?: (tenantId: string, runId: string) => Promise<string>;
  /** SVC_PRIVATE_ADDRESSES (mcp-address.ts); absent: allow. */
  privateAddresses?: PrivateAddresses;
  /** Tenants' own provider keys: a run on a provider the tenant set a key for calls its model with that key. */
  providerKeys: ProviderKeys;
}

/** The body of POST /api/runs. Id rules are checked first so their errors read exactly as the seed says. */
export const RunBody = v.object({
  id: v.optional(v.unknown()),
  sessionId: v.optional(v.unknown()),
  profile: v.pipe(v.string('profile: expected string'), v.minLength(1, 'a profile name')),
  parentId: v.optional(v.pipe(v.string(), v.maxLength(128))),
  title: v.optional(v.string()),
  prompt: v.optional(v.string()),
  files: v.optional(v.array(v.string())),
  /** The end user the run acts for: per_user memory stores give it that user's memory (and no one else's). */
  userId: v.optional(v.pipe(v.string('userId: expected string'), v.minLength(1, 'userId: a non-empty string'), v.maxLength(256, 'userId: at most 256 characters'))),
  /** What the run does when its session has one in progress (multitask.ts): `reject` (409), `enqueue`, `interrupt`. */
  multitask: v.optional(v.unknown()),
});

/**
 * `opts.profile` runs a profile that is not in the profiles table (the /v1 agents API: each agent session has its own
 * hidden profile, snapshotted on its session); `opts.extras` travel with this run only (driver.ts RunExtras).
 * Whose provider key the model is called with: a caller that brings the run's model (`opts.extras.model`, the /v1
 * agents API) says so in `opts.keySource`; otherwise the tenant's own key for the profile's provider when it set one,
 * read with the profile in the same statement (provider-keys/run-key.ts), else the operator's.
 * `opts.origin` names the feature that starts the run (`automation`, `workflow`): runFinished subscribers may ask for
 * their origins only. `opts.tenantMcp` are the tenant-supplied remote MCP servers among `opts.extras.mcpServers` (a
 * /v1 agent's); with the profile's own they are checked against the address policy before anything is created.
 * The run hooks' gates are asked before anything is created. Two round trips to the database for a run started at once:
 * the profile, read in one write with what the gates and the run's recorded listeners read ahead (the credit figures,
 * the webhook endpoints); then the new session's row, the outbox's and the run's in one transaction and one write.
 */
export async function createRun(
  deps: RunDeps,
  tenantId: string,
  body: v.InferOutput<typeof RunBody>,
  opts: {
    profile?: ProfileSpec;
    extras?: RunExtras;
    keySource?: 'platform' | 'tenant';
    origin?: string;
    tenantMcp?: ReadonlyArray<{ name: string; url: string }>;
    /** The caller's own choice for a busy session (automations, workflows, the chat gateway, /v1), over body and profile. */
    multitask?: Multitask;
  } = {},
): Promise<{ runId: string; sessionId: string; status?: 'queued' }> {
  if (body.id !== undefined && (typeof body.id !== 'string' || !CLIENT_ID_PATTERN.test(body.id))) throw badRequest('invalid run id');
  if (body.sessionId !== undefined && (typeof body.sessionId !== 'string' || !CLIENT_ID_PATTERN.test(body.sessionId))) throw badRequest('invalid session id');
  const asked = body.multitask === undefined ? undefined : parseMultitask(body.multitask);
  // what the gates and the run's recorded listeners read (the credit figures, the webhook endpoints) goes in the same
  // write as the profile's read
  const read: { found: Awaited<ReturnType<typeof getRunProfile>>; ahead?: Ahead } = opts.profile
    ? { found: { spec: opts.profile, keys: [] } }
    : await withTenant(deps.db, tenantId, async (tx) => {
        const ahead = await deps.hooks.readAhead(tx, tenantId, 'start');
        await commitWithNext(tx);
        return { found: await getRunProfile(tx, body.profile, typeof body.sessionId === 'string' ? body.sessionId : undefined), ahead };
      });
  const { found, ahead } = read;
  if (!found) throw badRequest(`unknown_profile: ${body.profile}`);
  const profile = found.spec;
  const strategy: Multitask = opts.multitask ?? asked ?? (profile.multitask as Multitask | undefined) ?? 'reject';
  if (deps.privateAddresses === 'deny') await refusePrivateMcp([...(profile.mcpServers ?? []), ...(opts.tenantMcp ?? [])], deps.privateAddresses);
  await assertProfileReady(deps.db, tenantId, profile);
  // the model the run calls: an existing session's snapshot of its profile (a later profile change never alters it)
  const runs = found.snapshot ?? profile;
  const own = opts.extras?.model ? undefined : runKey(runs, found.keys, (row) => deps.providerKeys.open(tenantId, row));
  const extras: RunExtras | undefined = own?.model ? { ...opts.extras, model: own.model } : opts.extras;
  const keySource = opts.keySource ?? own?.keySource ?? 'platform';
  const cost = { runtime: runs.runtime, model: opts.extras?.model?.model ?? runs.model ?? null, keySource } as const;
  await deps.hooks.checkGates({ tenantId, profile: body.profile, parentId: body.parentId ?? null, sessionId: (body.sessionId as string | undefined) ?? null, ...cost }, ahead);
  const skills = await resolveSkills(deps.db, tenantId, profile.skills);
  const runId = (body.id as string | undefined) ?? prefixedId('run');
  // a busy session: the run is not placed now (multitask.ts starts it on its turn), unless the strategy is `reject`
  let placed: (PlacedSession & { row?: NewSessionRow }) | undefined;
  if (body.sessionId === undefined) placed = await openSessionOnRunner(deps, tenantId, profile);
  else {
    placed = await resumeSession(deps, tenantId, body.sessionId as string, body.profile).catch((err: unknown) => {
      if (strategy !== 'reject' && err instanceof AppError && err.message === SESSION_BUSY) return undefined;
      throw err;
    });
  }
  const sessionId = placed?.sessionId ?? (body.sessionId as string);
  const subTask: SubTask = {
    id: runId,
    profile: body.profile,
    sessionId,
    ...(body.parentId !== undefined ? { parentId: body.parentId } : {}),
    title: body.title ?? '',
    prompt: body.prompt ?? '',
    files: body.files ?? [],
  };
  if (strategy !== 'reject' && (opts.extras || opts.profile)) throw badRequest(`multitask: ${strategy} is not available to this caller (its runs carry settings that are not stored)`);
  const memory = { endUserId: body.userId ?? null, stores: runs.memoryStores ?? null };
  const row = { id: runId, tenantId, sessionId, profile: body.profile, parentId: body.parentId ?? null, subTask, ownerId: deps.ownerId, cost, origin: opts.origin, memory };
  const recorded = { tenantId, runId, sessionId, profile: body.profile, parentId: body.parentId ?? null, origin: opts.origin ?? null, newSession: placed?.row !== undefined };
  // a new session is recorded here, already claimed by this run: one transaction for the session and the run
  const queued = await withTenant(deps.db, tenantId, async (tx) => {
    // the new session's row goes in one write with the next statement (nothing reads its answer)
    if (placed?.row) await sendWithNext(tx).then(() => insertSession(tx, placed.row!, { prompt: body.prompt ?? null }));
    // a session with runs waiting is busy too: a new run neither jumps the queue nor starts beside it
    else if (!placed || !(await markSessionRunning(tx, sessionId, body.prompt ?? null, { unlessQueued: true }))) {
      if (strategy === 'reject') throw new AppError(409, SESSION_BUSY);
      const { position, free } = await admitToQueue(tx, sessionId, strategy);
      await deps.hooks.runRecorded(tx, recorded, ahead);
      if (!(await insertRun(tx, { ...row, queued: strategy }))) throw new AppError(409, `run ${runId} already exists`);
      await appendEvents(tx, tenantId, [{ runId, seq: 1, event: queuedEvent(sessionId, position, strategy) }]);
      return { strategy, free };
    }
    // what must be written with the run (the webhook outbox's run.started) goes before its row, which commits
    await deps.hooks.runRecorded(tx, recorded, ahead);
    await commitWithNext(tx); // the run's row is the last statement: a run id taken fails it, which rolls back all
    const inserted = await insertRun(tx, row);
    if (!inserted) throw new AppError(409, `run ${runId} already exists`);
    return undefined;
  });
  if (queued) {
    if (queued.strategy === 'interrupt') await interruptCurrent(deps, tenantId, sessionId);
    // the run in progress ended before the lock (or its end is being written): no run's end starts the queue then
    if (queued.free) void startNextQueued(deps, tenantId, sessionId).catch((err) => deps.log.warn('starting a session queue failed', { sessionId, error: String(err) }));
    return { runId, sessionId, status: 'queued' };
  }
  // a run with per-run settings nothing stores cannot be re-dispatched as it was: its approvals are held, not parked
  const parkable = !opts.extras && !opts.profile;
  await launchRun(deps, { tenantId, runId, sessionId, runner: placed!.runner, subTask, extras: { ...extras, ...(skills.length ? { skills } : {}), ...(parkable ? { parkable } : {}) } });
  return { runId, sessionId }; // the seed's answer; only a queued run says more
}

export async function getRunSummary(deps: RunDeps, tenantId: string, runId: string): Promise<RunSummary> {
  const row = await withTenant(deps.db, tenantId, (tx) => getRunShown(tx, runId));
  if (!row) throw notFound(`unknown run: ${runId}`);
  return toSummary(row);
}

export async function listRunSummaries(deps: RunDeps, tenantId: string, filter: { profile?: string; sessionId?: string; status?: ShownRunStatus }, page: Page) {
  return withTenant(deps.db, tenantId, (tx) => listRuns(tx, filter, page));
}
