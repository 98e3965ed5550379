import { Hono } from 'hono';
import * as jose from 'jose';
import type { Config } from '../../config/config.ts';
import type { Database } from '../../db/index.ts';
import { createLogger } from '../../shared/log.ts';
import type { Metrics } from '../../app/metrics.ts';
import { useJsonErrors } from '../../shared/http.ts';
import { bootstrapIdentity, identityRoutes, requireAuth, resolveSecret, tenantRoutes, type IdentityEnv } from './identity/index.ts';

/**
 * The conductor: the control plane behind `/api/*`. Called by the composition root (src/app) with an open, migrated
 * database. It is the only module that touches the database.
 */
export interface Conductor {
  app: Hono<IdentityEnv>;
  /** The owner key created or confirmed at boot (SVC_BOOTSTRAP_TOKEN or the first-boot key), if known. */
  bootstrapKey: string | undefined;
  close(): Promise<void>;
}

export interface ConductorDeps {
  config: Config;
  database: Database;
  /** In-process fetch to the runner of the same process (role all); otherwise runners are reached over the network. */
  runnerFetch?: typeof fetch;
  selfUrl: string;
  metrics: Metrics;
}

export async function createConductor(deps: ConductorDeps): Promise<Conductor> {
  const { config, database } = deps;
  const log = createLogger('conductor');
  const persistent = config.databaseUrl !== 'memory';
  const pepper = resolveSecret({ configured: config.identity.pepper, dataDir: config.dataDir, file: 'pepper', persist: persistent });
  const runTokenKey = new TextEncoder().encode(
    resolveSecret({ configured: config.identity.runTokenSecret, dataDir: config.dataDir, file: 'run-token-key', persist: persistent }),
  );
  const keyDeps = { db: database.db, pepper, keyEnv: config.identity.keyEnv };
  const boot = await bootstrapIdentity(
    { ...keyDeps, log },
    { bootstrapToken: config.identity.bootstrapToken, dataDir: config.dataDir, writeKeyFile: persistent },
  );
  const { jwtIssuer, jwksUrl, jwtAudience } = config.identity;
  const jwt = jwtIssuer && jwksUrl ? { issuer: jwtIssuer, audience: jwtAudience, jwks: jose.createRemoteJWKSet(new URL(jwksUrl)) } : undefined;

  const api = new Hono<IdentityEnv>();
  useJsonErrors(api);
  api.use('*', requireAuth({ db: database.db, pepper, runTokenKey, jwt }));
  api.route('/', identityRoutes(keyDeps));
  api.route('/tenants', tenantRoutes(database.db, config.identity.adminTenant));

  const app = new Hono<IdentityEnv>();
  useJsonErrors(app);
  app.route('/api', api);
  return {
    app,
    bootstrapKey: boot.token,
    async close() {},
  };
}
