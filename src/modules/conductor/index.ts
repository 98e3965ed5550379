import { Hono } from 'hono';
import * as jose from 'jose';
import type { Config } from '../../config/config.ts';
import type { Database } from '../../db/index.ts';
import type { FetchLike } from '../../contracts/runner.client.ts';
import { createLogger } from '../../shared/log.ts';
import { useJsonErrors } from '../../shared/http.ts';
import { prefixedId } from '../../shared/ids.ts';
import { resolveSecret } from '../../shared/secret-files.ts';
import type { Metrics } from '../../shared/metrics.ts';
import { authenticate, bootstrapIdentity, identityRoutes, mintRunToken, requireAuth, tenantRoutes, type IdentityEnv, type KeyDeps, type Principal } from './identity/index.ts';
import { createFleet } from './runners/fleet.ts';
import { conductorReadiness } from './runners/readiness.ts';
import type { ReadyReport } from '../../shared/readiness.ts';
import { createBroadcaster } from './runners/broadcast.ts';
import { profileRoutes } from './profiles/profiles.routes.ts';
import type { ProfileDeps } from './profiles/profiles.service.ts';
import { poolRoutes } from './pools/pools.ts';
import { sessionRoutes } from './sessions/sessions.routes.ts';
import { createActiveRuns } from './runs/active-runs.ts';
import { stopLocally } from './runs/cancel.ts';
import { createEventLog } from './runs/event-log.ts';
import { createHub, type Hub } from './runs/hub.ts';
import { createOwnership } from './runs/ownership.ts';
import { createJobs } from './jobs/index.ts';
import { createRunHooks, type RunHooks } from './hooks/index.ts';
import { eventsAfter } from './runs/runs.repo.ts';
import { runRoutes } from './runs/runs.routes.ts';
import type { RunDeps } from './runs/runs.service.ts';
import { withTenant } from '../../db/index.ts';
import { deviceApiRoutes } from './device/index.ts';
import { dashboardRoutes } from './dashboard/index.ts';
import { connectedAppRoutes } from './apps/index.ts';
import { attachBilling, billingRoutes, checkoutRoutes, createStripeBilling, stripeWebhookRoutes } from './billing/index.ts';
import { skillRoutes } from './skills/index.ts';
import { notificationRoutes } from './notifications/index.ts';
import { capabilityBundleRoutes } from './toolkit/index.ts';

/**
 * The conductor: the control plane behind `/api/*`. Called by the composition root (src/app) with an open, migrated
 * database; it is the only module that touches the database. It drives runs on the runners of its fleet (the
 * in-process runner in role all, `SVC_RUNNERS` otherwise) and owns them through a heartbeat lease.
 */
export interface Conductor {
  app: Hono<IdentityEnv>;
  /** The owner key created or confirmed at boot (SVC_BOOTSTRAP_TOKEN or the first-boot key), if known. */
  bootstrapKey: string | undefined;
  ownerId: string;
  /** Run hooks: subscribe to runFinished, gate run creation (billing, automations, workflows, publishing metrics). */
  hooks: RunHooks;
  /** What other modules (the /v1 agents API) may use of the conductor: its services, never its tables' SQL. */
  services: ConductorServices;
  /** For `/readyz`: the database answers and a runner of the fleet does. */
  readiness(): Promise<ReadyReport>;
  /** Ends the runs this conductor drives (`interrupted`, with their terminal event) so their streams finish. */
  drain(): Promise<void>;
  close(): Promise<void>;
}

export interface ConductorServices {
  db: Database['db'];
  authenticate(header: string | undefined): Promise<Principal>;
  runDeps: RunDeps & { hub: Hub };
  profileDeps: ProfileDeps;
  /** The API-key service's dependencies (the /api/keys extension routes issue, list and revoke through it). */
  keyDeps: KeyDeps;
  /** The at-rest encryption secret for provider keys and vault credentials (SVC_SECRETS_KEY, or generated in dev). */
  secretsKey: string;
}

export interface ConductorDeps {
  config: Config;
  database: Database;
  /** In-process fetch to the runner of the same process (role all); otherwise runners are reached over the network. */
  runnerFetch?: FetchLike;
  /** What calls to runners carry (SVC_INTERNAL_TOKEN, or the generated one). */
  internalToken: string;
  selfUrl: string;
  metrics: Metrics;
}

export async function createConductor(deps: ConductorDeps): Promise<Conductor> {
  const { config, database, metrics } = deps;
  const db = database.db;
  const log = createLogger('conductor');
  const persistent = config.databaseUrl !== 'memory';
  // kept in the secrets folder, never in the runner's data folder (files an older svc left in the data folder move in)
  const secret = (configured: string | undefined, file: string) =>
    resolveSecret({ configured, dir: config.secretsDir, file, persist: persistent, legacyDir: config.dataDir });
  const pepper = secret(config.identity.pepper, 'pepper');
  const runTokenKey = new TextEncoder().encode(secret(config.identity.runTokenSecret, 'run-token-key'));
  const keyDeps = { db, pepper, keyEnv: config.identity.keyEnv };
  const secretsKey = secret(config.identity.secretsKey, 'secrets-key');
  const boot = await bootstrapIdentity({ ...keyDeps, log }, { bootstrapToken: config.identity.bootstrapToken, dataDir: config.dataDir, writeKeyFile: persistent });
  const { jwtIssuer, jwksUrl, jwtAudience } = config.identity;
  const jwt = jwtIssuer && jwksUrl ? { issuer: jwtIssuer, audience: jwtAudience, jwks: jose.createRemoteJWKSet(new URL(jwksUrl)) } : undefined;

  const ownerId = config.conductor.instanceId ?? prefixedId('cond', 12);
  const fleet = createFleet({ urls: config.conductor.runners, inProcess: deps.runnerFetch, internalToken: deps.internalToken, log: log.child('fleet') });
  const broadcaster = createBroadcaster({ db, fleet, log: log.child('reconcile'), intervalMs: config.conductor.reconcileMs });
  const hub = createHub({ database, log: log.child('hub'), fetchAfter: (tenantId, runId, after) => withTenant(db, tenantId, (tx) => eventsAfter(tx, runId, after)) });
  const eventLog = createEventLog({ db, hub, log: log.child('events') });
  const active = createActiveRuns();
  const jobs = createJobs({ database, log: log.child('jobs'), metrics });
  const hooks = createRunHooks({ jobs, log: log.child('hooks') });
  const runDeps: RunDeps & { hub: typeof hub } = {
    db,
    fleet,
    log,
    metrics,
    hub,
    eventLog,
    active,
    hooks,
    ownerId,
    mintRunToken: (tenantId, runId) => mintRunToken(runTokenKey, { tenantId, runId }),
  };
  hub.onCancelRequest((tenantId, runId) => void stopLocally(runDeps, tenantId, runId));
  const ownership = createOwnership({ db, hub, jobs, hooks, ownerId, ttlMs: config.conductor.leaseTtlMs, log: log.child('ownership') });

  await attachBilling({ db, hooks, billing: config.billing, defaults: config.cli, metrics, log: log.child('billing') });
  await hub.start();
  await jobs.start();
  await ownership.start();
  await broadcaster.restore(await fleet.probe());
  broadcaster.start();

  const authDeps = { db, pepper, runTokenKey, jwt };
  const profileDeps: ProfileDeps = { db, fleet, broadcaster };
  const api = new Hono<IdentityEnv>();
  useJsonErrors(api);
  api.use('*', requireAuth(authDeps));
  api.route('/', identityRoutes(keyDeps));
  api.route('/tenants', tenantRoutes(keyDeps, config.identity.adminTenant));
  api.route('/profiles', profileRoutes(profileDeps));
  api.route('/pools', poolRoutes({ db, broadcaster }));
  api.route('/runs', runRoutes({ ...runDeps, keepAliveMs: 15_000 }));
  api.route('/', sessionRoutes({ ...runDeps, fanOutTimeoutMs: 2000 }));
  api.route('/skills', skillRoutes({ db }));
  api.route('/notifications', notificationRoutes({ db }));
  api.route('/capability-bundles', capabilityBundleRoutes());
  api.route('/connected-apps', connectedAppRoutes({ db, configured: config.cli.connectedApps }));
  api.route('/', billingRoutes({ db, defaults: config.cli, adminTenant: config.identity.adminTenant }));
  const stripeBilling = createStripeBilling({ db, billing: config.billing, selfUrl: deps.selfUrl, log: log.child('stripe') });
  api.route('/', checkoutRoutes(stripeBilling));

  const app = new Hono<IdentityEnv>();
  useJsonErrors(app);
  // The CLI's logins: device-code issue and polling (no key yet, so before the authenticated /api) and the dashboard
  // pages a signed-in user approves them on (cookie sessions, not under /api).
  const device = { db, keyDeps, ttlMs: config.cli.deviceCodeTtlMs };
  app.route('/api/device', deviceApiRoutes(device));
  app.route('/api/stripe', stripeWebhookRoutes(stripeBilling));
  app.route('/', dashboardRoutes({ db, pepper, keyDeps, device, authenticate: (header) => authenticate(authDeps, header) }));
  app.route('/api', api);
  async function drain(): Promise<void> {
    broadcaster.stop();
    // Runs we drive cannot finish once we are gone: end them `interrupted` now, with their terminal event.
    for (const run of active.all()) stopLocally(runDeps, run.tenantId, run.runId, 'interrupted');
    await Promise.all(active.all().map((r) => r.done));
    await active.settled();
  }

  return {
    app,
    bootstrapKey: boot.token,
    ownerId,
    hooks,
    services: { db, authenticate: (header) => authenticate(authDeps, header), runDeps, profileDeps, keyDeps, secretsKey },
    readiness: conductorReadiness({ db, fleet }),
    drain,
    async close() {
      await drain();
      await eventLog.close();
      await ownership.stop();
      await jobs.stop();
      await hub.stop();
    },
  };
}

// The services the agents API builds on, re-exported through this door.
export { createRun, getRunSummary, listRunSummaries, RunBody, type RunDeps } from './runs/runs.service.ts';
export { followRun } from './runs/follow.ts';
export { createSessionFor, shutdownSession } from './sessions/sessions.service.ts';
export { cancelRun, terminateRun } from './runs/cancel.ts';
export { createProfile, getProfile, replaceProfileByName, deleteProfile, type ProfileDeps } from './profiles/profiles.service.ts';
export { requireAuth, atLeast, type IdentityEnv, type Principal, type Role } from './identity/index.ts';
export { issueKey, listKeys, revokeKey, type ApiKeyView, type KeyDeps } from './identity/index.ts';
export type { StoredEvent, Hub } from './runs/hub.ts';
export type { RunHooks, RunFinished, RunGate, RunGateContext } from './hooks/index.ts';
export type { Jobs } from './jobs/index.ts';
// The credit ledger, for whatever prices usage (charges are idempotent per run).
export { chargeCredit, getWallet, getSpendCap, priceTokens, ratesOf, type Wallet, type SpendCap } from './billing/index.ts';
// The shared rate limiter (counters in PostgreSQL), for /v1, /api and public routes.
export { createLimiter, purgeExpiredLimits, type Limiter, type LimitRule } from './limits/index.ts';
