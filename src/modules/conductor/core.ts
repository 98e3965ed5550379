import type { Config } from '../../config/config.ts';
import type { Database } from '../../db/index.ts';
import type { FetchLike, RunnerClient } from '../../contracts/runner.client.ts';
import type { Metrics } from '../../shared/metrics.ts';
import { createLogger, type Logger } from '../../shared/log.ts';
import { prefixedId } from '../../shared/ids.ts';
import { resolveSecret } from '../../shared/secret-files.ts';
import type { FeatureDeps } from './feature.ts';
import { authenticate, bootstrapIdentity, createGuards, createJwksCache, createKeyCache, mintRunToken, type AuthDeps } from './identity/index.ts';
import { createGuardedFetch } from '../../shared/egress/index.ts';
import { createBroadcaster, createFleet } from './runners/index.ts';
import { createRunServices } from './runs/index.ts';
import { createLimiter } from './limits/index.ts';
import { createJobs } from './jobs/index.ts';
import { createRunHooks } from './hooks/index.ts';
import { createProviderKeys } from './provider-keys/index.ts';
import { createSecretBox } from '../../shared/secret-box.ts';
import { createSandboxLimits } from './sandbox-limits/index.ts';

export interface ConductorDeps {
  config: Config;
  database: Database;
  /** In-process fetch to the runner of the same process (role all); otherwise runners are reached over the network. */
  runnerFetch?: FetchLike;
  /**
   * The runner of the same process called directly (the runner contract's direct transport); takes precedence over
   * `runnerFetch`. The composition root passes it for role all and conductor,runner.
   */
  runnerDirect?: (baseUrl: string) => RunnerClient;
  /** What calls to runners carry (SVC_INTERNAL_TOKEN, or the generated one). */
  internalToken: string;
  selfUrl: string;
  metrics: Metrics;
}

/**
 * Builds what every feature shares, once: the secrets, the first owner key, authentication, the fleet and broadcaster,
 * the run machinery (not started: the runs and runners features start it).
 */
export async function createCore(deps: ConductorDeps, log: Logger): Promise<{ featureDeps: FeatureDeps; authDeps: AuthDeps; bootstrapKey: string | undefined; ownerId: string }> {
  const { config, database, metrics } = deps;
  const db = database.db;
  const persistent = config.databaseUrl !== 'memory';
  // kept in the secrets folder, never in the runner's data folder (files an older svc left in the data folder move in)
  const secret = (configured: string | undefined, file: string) =>
    resolveSecret({ configured, dir: config.secretsDir, file, persist: persistent, legacyDir: config.dataDir });
  const pepper = secret(config.identity.pepper, 'pepper');
  const runTokenKey = new TextEncoder().encode(secret(config.identity.runTokenSecret, 'run-token-key'));
  const keyCache = createKeyCache();
  const keys = { db, pepper, keyEnv: config.identity.keyEnv, keyCache };
  const secretsKey = secret(config.identity.secretsKey, 'secrets-key');
  const boot = await bootstrapIdentity({ ...keys, log }, { bootstrapToken: config.identity.bootstrapToken, dataDir: config.dataDir, writeKeyFile: persistent, adminTenant: config.identity.adminTenant });
  const { jwtIssuer, jwksUrl, jwtAudience } = config.identity;
  // the operator's identity provider may be on the internal network: its JWKS is fetched without the address policy
  const jwt = jwtIssuer && jwksUrl ? { issuer: jwtIssuer, audience: jwtAudience, jwks: createJwksCache({ fetch: (url, init) => fetch(url, init) }).keysOf(jwksUrl) } : undefined;
  const authDeps: AuthDeps = { db, pepper, keyCache, runTokenKey, jwt };

  const ownerId = config.conductor.instanceId ?? prefixedId('cond', 12);
  const sandboxLimits = createSandboxLimits({ db, config: config.sandboxLimits });
  const fleet = createFleet({
    urls: config.conductor.runners,
    inProcess: deps.runnerFetch,
    direct: deps.runnerDirect,
    internalToken: deps.internalToken,
    log: log.child('fleet'),
    prepareProfile: (tenant, profile) => sandboxLimits.prepareProfile(tenant, profile),
  });
  const broadcaster = createBroadcaster({ db, fleet, log: log.child('reconcile'), intervalMs: config.conductor.reconcileMs });
  const jobs = createJobs({ database, log: log.child('jobs'), metrics });
  const hooks = createRunHooks({ jobs, log: log.child('hooks') });
  const runs = createRunServices({
    database,
    db,
    fleet,
    log,
    metrics,
    ownerId,
    leaseTtlMs: config.conductor.leaseTtlMs,
    runWriteRetryMs: config.conductor.runWriteRetryMs,
    privateAddresses: config.privateAddresses,
    mintRunToken: (tenantId, runId) => mintRunToken(runTokenKey, { tenantId, runId }, config.identity.runTokenTtlSeconds),
    jobs,
    hooks,
    providerKeys: createProviderKeys({ db, box: createSecretBox(secretsKey) }),
  });
  const featureDeps: FeatureDeps = {
    config,
    selfUrl: deps.selfUrl,
    database,
    db,
    log,
    metrics,
    secrets: { pepper, runTokenKey, secretsKey },
    authenticate: (header) => authenticate(authDeps, header),
    keys,
    guards: createGuards(config.identity.adminTenant),
    internalToken: deps.internalToken,
    fleet,
    broadcaster,
    sandboxLimits,
    runs,
    limiter: createLimiter({ db, log: createLogger('limits') }),
    tenantFetch: createGuardedFetch({ privateAddresses: config.privateAddresses }),
    jobs,
    hooks,
  };
  return { featureDeps, authDeps, bootstrapKey: boot.token, ownerId };
}
