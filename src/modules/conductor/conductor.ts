import { Hono } from 'hono';
import { createLogger } from '../../shared/log.ts';
import { useJsonErrors } from '../../shared/http.ts';
import { drainInReverse, servingInOrder, startInOrder, stopInReverse } from '../../shared/lifecycle.ts';
import { createCore, type ConductorDeps } from './core.ts';
import type { Feature } from './feature.ts';
import { FEATURES } from './features.ts';
import { requireAuth, type IdentityEnv } from './identity/index.ts';
import { isExtensionPath, principalLimitRules } from './limits/index.ts';
import { createConductorServices, type ConductorServices } from './services.ts';
import { conductorReadiness } from './runners/readiness.ts';
import { allOf, merge, type ReadyReport } from '../../shared/readiness.ts';
import type { RunHooks } from './hooks/index.ts';

/**
 * The conductor: the control plane behind `/api/*`. Called by the composition root (src/app) with an open, migrated
 * database; it is the only module that touches the conductor's tables. It builds the shared core (core.ts), then every
 * feature of features.ts: `api` parts under `/api` behind authentication, `public` parts at the root before it.
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
  /** For `/readyz`: the database answers, a runner of the fleet does, and the job queue is up. */
  readiness(): Promise<ReadyReport>;
  /** Called once the server serves: brings the job queue up (pg-boss loads and starts off the boot's path), then the features' `serving` work. */
  serving(): void;
  /** Settles (with the error) only if the job queue failed to come up after the boot: the server then stops. */
  failure: Promise<Error>;
  /** Ends the runs this conductor drives (`interrupted`, with their terminal event) so their streams finish. */
  drain(): Promise<void>;
  close(): Promise<void>;
}

export async function createConductor(deps: ConductorDeps & { features?: readonly Feature[] }): Promise<Conductor> {
  const log = createLogger('conductor');
  const core = await createCore(deps, log);
  const parts = (deps.features ?? FEATURES).map((feature) => feature(core.featureDeps));

  const api = new Hono<IdentityEnv>();
  useJsonErrors(api);
  api.use('*', requireAuth(core.authDeps));
  // the extension routes of seed 001 share /v1's per-key and per-organisation limits (counted in PostgreSQL)
  const limits = { perKey: deps.config.agents.rateLimitPerKey, perOrg: deps.config.agents.rateLimitPerOrg, windowMs: 60_000 };
  api.use('*', core.featureDeps.limiter.middleware(principalLimitRules<IdentityEnv>(limits, (c) => isExtensionPath(c.req.path))));
  for (const p of parts) if (p.api) api.route('/', p.api);
  const app = new Hono<IdentityEnv>();
  useJsonErrors(app);
  // Public parts first: their paths (e.g. /api/device) must answer before the authenticated /api claims them.
  for (const p of parts) if (p.public) app.route('/', p.public);
  app.route('/api', api);

  // The features' queues are recorded, not yet set up: the job queue comes up once the server serves (serving()).
  await startInOrder(parts);
  const jobs = core.featureDeps.jobs;
  let failed!: (err: Error) => void;
  const failure = new Promise<Error>((resolve) => (failed = resolve));
  const ready = conductorReadiness({ db: core.featureDeps.db, fleet: core.featureDeps.fleet });

  const drain = () => drainInReverse(parts);
  return {
    app,
    bootstrapKey: core.bootstrapKey,
    ownerId: core.ownerId,
    hooks: core.featureDeps.hooks,
    services: createConductorServices(core.featureDeps),
    async readiness() {
      const state = jobs.state();
      return merge([await ready(), allOf([{ name: 'job queue', ok: state.up, ms: 0, ...(state.up ? {} : { error: state.why }) }])]);
    },
    serving() {
      jobs.begin().catch((err: unknown) => {
        log.error('the job queue failed to start', { error: String(err) });
        failed(err instanceof Error ? err : new Error(String(err)));
      });
      servingInOrder(parts);
    },
    failure,
    drain,
    async close() {
      await drain();
      await stopInReverse(parts);
    },
  };
}
