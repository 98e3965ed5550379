import type * as v from 'valibot';
import { withTenant } from '../../db/index.ts';
import type { ProfileSpec, RunnerClient } from '../../contracts/runner.client.ts';
import type { FeatureDeps } from './feature.ts';
import type { RunGateContext } from './hooks/index.ts';
import type { Limiter } from './limits/index.ts';
import type { GuardedFetch } from '../../shared/egress/index.ts';
import type { ApiKeyView, Principal } from './identity/index.ts';
import { issueKey, listKeys, revokeKey } from './identity/index.ts';
import type { RunExtras } from './runs/driver.ts';
import type { StoredEvent } from './runs/hub.ts';
import { cancelRun } from './runs/cancel.ts';
import { leaseAlive } from './runs/leases.repo.ts';
import { followRun } from './runs/follow.ts';
import type { RunSummary } from './runs/runs.repo.ts';
import { createRun, getRunSummary, type RunBody } from './runs/runs.service.ts';
import { usageByModel, usageEventRows, type UsageEventRow, type UsageCounts, type UsageWindow } from './runs/usage.repo.ts';
import { getSessionRow } from './sessions/sessions.repo.ts';
import type { ProviderKeys } from './provider-keys/index.ts';
import type { MemoryDeps } from './memory/index.ts';
import type { SandboxLimitsService } from './sandbox-limits/index.ts';
import type { Approval, ApprovalDecisionBody } from '../../contracts/approvals.ts';
import { approvalDepsOf, decide as decideApproval } from './approvals/approvals.service.ts';
import { createSessionFor, placeSession, shutdownSession, type PlaceOptions, type PlacedSession } from './sessions/sessions.service.ts';

/**
 * What other modules (the /v1 agents API) may use of the conductor: narrow services over its tables, never the
 * tables themselves. The agents API keeps its own tables (agents, agent sessions, files, …) and its own SQL for them.
 */
export interface ConductorServices {
  /** Verifies a bearer (API key, run token, JWT); 401 when it cannot. */
  authenticate(header: string | undefined): Promise<Principal>;
  runs: RunsService;
  sessions: SessionsService;
  keys: KeysService;
  /** Tenants' own provider keys (`/api/providers/{provider}/key`): every run of the tenant on that provider uses its key. */
  providerKeys: ProviderKeys;
  /** The at-rest encryption secret for provider keys and vault credentials (SVC_SECRETS_KEY, or generated in dev). */
  secretsKey: string;
  /** The shared rate limiter (the conductor's, so `/v1` and `/api` count in the same PostgreSQL table). */
  limiter: Limiter;
  /** The guarded fetcher under SVC_PRIVATE_ADDRESSES: how URLs tenants give are called (shared/egress). */
  tenantFetch: GuardedFetch;
  /** What the memory-store services (exported by the conductor's index) take: /v1/memory_stores calls them. */
  memory: MemoryDeps;
  /** Sandbox limits: a /v1 environment's `config.limits` above the operator's or the tenant's ceiling is a 400. */
  sandboxLimits: Pick<SandboxLimitsService, 'assertWithin'>;
  approvals: ApprovalsService;
}

export interface ApprovalsService {
  /**
   * A decision on a pending approval of the tenant's run `runId`, as `POST /api/runs/{id}/approvals/{approvalId}` takes
   * it (404 unknown, 409 already decided); `actor` is recorded as who decided.
   */
  decide(tenantId: string, actor: string, runId: string, approvalId: string, body: ApprovalDecisionBody): Promise<Approval & { delivered: boolean }>;
}

export interface RunsService {
  /** Starts a run (`opts.profile`: a profile outside the profiles table; `opts.extras`: this run only; `opts.keySource`: whose provider key pays). */
  create(tenantId: string, body: v.InferOutput<typeof RunBody>, opts?: { profile?: ProfileSpec; extras?: RunExtras; keySource?: 'platform' | 'tenant'; tenantMcp?: ReadonlyArray<{ name: string; url: string }> }): Promise<{ runId: string; sessionId: string }>;
  /** 404 when the tenant has no such run. */
  get(tenantId: string, runId: string): Promise<RunSummary>;
  /** The run's events after `afterSeq`, then live until its terminal event (`null`: a keep-alive tick). */
  follow(tenantId: string, runId: string, afterSeq: number, opts: { keepAliveMs: number; signal: AbortSignal }): Promise<AsyncIterable<StoredEvent | null>>;
  cancel(tenantId: string, runId: string): Promise<void>;
  /** This conductor's id: what it records as the owner of the work it drives. */
  ownerId: string;
  /** Whether the conductor `ownerId` is alive (holds a current lease), so what it owns is driven elsewhere. */
  ownerAlive(ownerId: string): Promise<boolean>;
  /** Asks the run gates (billing's credit check) about a run before anything is allocated for it; throws 402 to refuse. */
  checkGates(ctx: RunGateContext): Promise<void>;
  /** Usage events of the tenant's runs, summed per model. */
  usageByModel(tenantId: string, w: UsageWindow): Promise<Array<UsageCounts & { model: string; events: string }>>;
  /** Usage events newest first (`limit + 1` rows). */
  usageEvents(tenantId: string, w: UsageWindow, page: { limit: number; offset: number }): Promise<UsageEventRow[]>;
}

export interface SessionsService {
  /** Places a new runner session for the profile (`sandboxOf`: beside that session, sharing its sandbox). */
  create(tenantId: string, profile: ProfileSpec, opts?: PlaceOptions): Promise<PlacedSession>;
  /** The client of the runner holding the session, hydrating it there first when its runner lost it; 404, 503. */
  place(tenantId: string, sessionId: string, opts?: PlaceOptions): Promise<RunnerClient>;
  shutdown(tenantId: string, sessionId: string, opts?: { dropProfile?: boolean }): Promise<void>;
  /** The client of the healthy runner holding the session now; undefined when there is none (or it is shut down). */
  runnerOf(tenantId: string, sessionId: string): Promise<RunnerClient | undefined>;
}

export interface KeysService {
  issue(principal: Principal, input: { name: string; expiresAt?: string | null }): Promise<ApiKeyView & { token: string }>;
  list(principal: Principal): Promise<ApiKeyView[]>;
  revoke(principal: Principal, keyId: string): Promise<void>;
}

export function createConductorServices(deps: FeatureDeps): ConductorServices {
  const run = deps.runs.deps;
  const approvals = approvalDepsOf(deps);
  return {
    authenticate: deps.authenticate,
    runs: {
      // the /v1 agents API orders its turns itself (a session's turns queue in its own table): a busy runner session is refused
      create: (tenantId, body, opts) => createRun(run, tenantId, body, { ...opts, multitask: 'reject' }),
      get: (tenantId, runId) => getRunSummary(run, tenantId, runId),
      follow: (tenantId, runId, afterSeq, opts) => followRun(run, tenantId, runId, afterSeq, opts),
      cancel: (tenantId, runId) => cancelRun(run, tenantId, runId),
      ownerId: run.ownerId,
      ownerAlive: (ownerId) => leaseAlive(deps.db, ownerId),
      checkGates: (ctx) => deps.hooks.checkGates(ctx),
      usageByModel: (tenantId, w) => withTenant(deps.db, tenantId, (tx) => usageByModel(tx, w)),
      usageEvents: (tenantId, w, page) => withTenant(deps.db, tenantId, (tx) => usageEventRows(tx, w, page)),
    },
    sessions: {
      create: (tenantId, profile, opts) => createSessionFor(run, tenantId, profile, opts),
      place: async (tenantId, sessionId, opts) => (await placeSession(run, tenantId, sessionId, opts)).client,
      shutdown: (tenantId, sessionId, opts) => shutdownSession(run, tenantId, sessionId, opts),
      async runnerOf(tenantId, sessionId) {
        const row = await withTenant(deps.db, tenantId, (tx) => getSessionRow(tx, sessionId));
        if (!row || row.status === 'shutdown') return undefined;
        const member = deps.fleet.byUrl(row.runner_url);
        return member?.healthy ? member.client : undefined;
      },
    },
    keys: {
      issue: (principal, input) => issueKey(deps.keys, principal, input),
      list: (principal) => listKeys(deps.keys, principal),
      revoke: (principal, keyId) => revokeKey(deps.keys, principal, keyId),
    },
    providerKeys: run.providerKeys,
    secretsKey: deps.secrets.secretsKey,
    limiter: deps.limiter,
    tenantFetch: deps.tenantFetch,
    memory: { db: deps.db, config: deps.config.memory },
    sandboxLimits: deps.sandboxLimits,
    approvals: {
      decide: (tenantId, actor, runId, approvalId, body) =>
        decideApproval(
          approvals,
          { tenantId, tenantName: null, role: 'member', authKind: 'api_key', keyId: null, subject: actor },
          runId,
          approvalId,
          body,
        ),
    },
  };
}
