import type { Hono } from 'hono';
import type { Kysely } from 'kysely';
import type { Config } from '../../config/config.ts';
import type { Database, DB } from '../../db/index.ts';
import type { Lifecycle } from '../../shared/lifecycle.ts';
import type { Logger } from '../../shared/log.ts';
import type { Metrics } from '../../shared/metrics.ts';
import type { IdentityEnv, KeyDeps, Principal } from './identity/index.ts';
import type { Guards } from './identity/guards.ts';
import type { Broadcaster } from './runners/broadcast.ts';
import type { Fleet } from './runners/fleet.ts';
import type { SandboxLimitsService } from './sandbox-limits/index.ts';
import type { RunServices } from './runs/run-services.ts';
import type { Limiter } from './limits/index.ts';
import type { Jobs } from './jobs/index.ts';
import type { RunHooks } from './hooks/index.ts';
import type { GuardedFetch } from '../../shared/egress/index.ts';

/**
 * The conductor's feature contract. A feature is one folder under `src/modules/conductor/` whose `index.ts` exports a
 * factory `(deps) => FeatureParts`; `features.ts` lists the factories, one line each, and `createConductor` loops over
 * the list: it mounts every `api` under `/api` behind authentication, every `public` at the root without it, starts
 * the features in list order and drains and stops them in reverse.
 */
export interface FeatureParts extends Lifecycle {
  /** Tenant routes, mounted at `/api` after authentication (`c.get('principal')` is set; viewers may only read). */
  api?: Hono<IdentityEnv>;
  /** Unauthenticated routes mounted at `/` before `/api` (device login, dashboard, the chat gateway): paths are absolute. */
  public?: Hono<any>;
}

export type Feature = (deps: FeatureDeps) => FeatureParts;

/** The secrets the conductor resolved at boot (configured, or generated and kept in the secrets folder in dev). */
export interface ConductorSecrets {
  pepper: string;
  runTokenKey: Uint8Array;
  /** At-rest encryption secret for provider keys and vault credentials (SVC_SECRETS_KEY). */
  secretsKey: string;
}

/**
 * What every feature may use. Everything is built once by `createConductor` (core.ts) before any feature: features
 * share it, never build their own. Cross-cutting pieces land here as fields (the shared rate limiter, the job queue,
 * the `runFinished` hook) so a new family takes them from `deps`.
 */
export interface FeatureDeps {
  config: Config;
  /** This server's own base URL (links it hands out: checkout return pages, …). */
  selfUrl: string;
  database: Database;
  /** Tenant tables are reached through `withTenant`/`inTenant` (crud/), and SQL lives in the feature's `*.repo.ts`. */
  db: Kysely<DB>;
  log: Logger;
  metrics: Metrics;
  secrets: ConductorSecrets;
  /** Verifies a bearer (API key, run token, JWT) and answers who it is; 401 when it cannot. */
  authenticate(header: string | undefined): Promise<Principal>;
  /** The API-key service's dependencies (issue, list, revoke keys). */
  keys: KeyDeps;
  /** `requireRole(min, what)`, `operatorOnly()`, `readOnlyViewers()`: the one place role checks live. */
  guards: Guards;
  /** The token of calls between roles (SVC_INTERNAL_TOKEN, or generated in dev): runners present it when they announce themselves. */
  internalToken: string;
  /** The runners this conductor drives (in-process in role all, SVC_RUNNERS otherwise). */
  fleet: Fleet;
  /** Sends profiles and pools to every runner, and again to a restarted one. */
  broadcaster: Broadcaster;
  /** Sandbox limits: tenants' ceilings, the 400s above a ceiling, the limits a profile carries to runners. */
  sandboxLimits: SandboxLimitsService;
  /** Runs: their deps for the run services, the live hub, the event log, active runs and the ownership lease. */
  runs: RunServices;
  /** The shared rate limiter (counters in PostgreSQL, so limits hold across replicas): `limiter.middleware(rules)`. */
  limiter: Limiter;
  /**
   * The guarded fetcher (shared/egress) under SVC_PRIVATE_ADDRESSES: how every URL a tenant gives is called (webhooks,
   * JWKS documents), its connections checked against the address policy when they are made.
   */
  tenantFetch: GuardedFetch;
  /** The job queue (pg-boss on this PostgreSQL): `define`, `send`, `schedule` (cron) run once across replicas. */
  jobs: Jobs;
  /** Run hooks: `onRunFinished` (once per run, after its end is durable) and gates asked before a run is created. */
  hooks: RunHooks;
}
