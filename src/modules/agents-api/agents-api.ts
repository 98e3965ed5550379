import { Hono } from 'hono';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/index.ts';
import { createLogger } from '../../shared/log.ts';
import { drainInReverse, servingInOrder, startInOrder, stopInReverse } from '../../shared/lifecycle.ts';
import { readOnlyViewers, type ConductorServices, type Limiter } from '../conductor/index.ts';
import type { AgentsEnv } from './context.ts';
import { answerUnknownRoutes, useOpenAiErrors } from './errors.ts';
import type { AgentsFeatureParts } from './feature.ts';
import { AGENTS_FEATURES } from './features.ts';
import { createModelCatalog, createModelResolver } from './models/index.ts';
import { v1LimitRules, type RateLimits } from './rate-limits.ts';
import { createSecretBox } from './secret-box.ts';
import { DEFAULT_AGENT_SETTINGS, type AgentSettings } from './settings.ts';
import type { Signals } from './turns/turn-inbox.ts';

/**
 * The `/v1` agents API (seed 001, and ../shared/specs/agents-api-v1.md as the `openai` 7.15.0 SDK reads it), built on
 * the conductor's services: an agent session is a runner session with a snapshot of the agent, a turn is a run.
 * Returns the `/v1` app and the extension routes that live under `/api` (mounted by the composition root).
 */
export interface AgentsApi {
  v1: Hono<AgentsEnv>;
  api: Hono<AgentsEnv>;
  /** Called once the server serves: the families' background work begins (interrupted turns recover). */
  serving(): void;
  /** Called after the conductor's drain, before connections close: ends live turns' event streams cleanly. */
  drain(): Promise<void>;
  close(): Promise<void>;
}

export interface AgentsApiDeps {
  /** The agents API's own tables (docs/architecture.md, "Tables"); the conductor's are reached only through `conductor`. */
  db: Kysely<DB>;
  conductor: ConductorServices;
  /** The shared rate limiter (counters in PostgreSQL): per key and per organisation on every `/v1` request. */
  limiter: Limiter;
  limits?: RateLimits;
  settings?: Partial<AgentSettings>;
  /** The database's LISTEN/NOTIFY: input posted to a replica that does not drive the turn is handed to the one that does. */
  signals?: Signals;
  /**
   * Aborted once the database is gone for good (Database.lost: a throwaway cluster that died), its reason naming why:
   * every open session event stream ends with an error saying so.
   */
  databaseLost?: AbortSignal;
}

export async function createAgentsApi(deps: AgentsApiDeps): Promise<AgentsApi> {
  const settings = { ...DEFAULT_AGENT_SETTINGS, ...deps.settings };
  const resources = { db: deps.db, box: createSecretBox(deps.conductor.secretsKey), tenantFetch: deps.conductor.tenantFetch, privateAddresses: settings.privateAddresses };
  const models = createModelResolver({
    aggregators: settings.aggregators,
    providerKeys: async (tenantId, provider) => {
      const apiKey = await deps.conductor.providerKeys.get(tenantId, provider);
      return apiKey ? { apiKey } : undefined;
    },
  });
  const featureDeps = { db: deps.db, conductor: deps.conductor, resources, models, catalog: createModelCatalog(settings.aggregators), settings, log: createLogger('agents'), signals: deps.signals, databaseLost: deps.databaseLost };
  const parts: AgentsFeatureParts[] = AGENTS_FEATURES.map((feature) => feature(featureDeps));

  const v1 = new Hono<AgentsEnv>();
  useOpenAiErrors(v1);
  v1.use('*', async (c, next) => {
    c.set('principal', await deps.conductor.authenticate(c.req.header('authorization')));
    await next();
  });
  v1.use('*', deps.limiter.middleware(v1LimitRules(deps.limits)));
  v1.use('*', readOnlyViewers<AgentsEnv>());
  for (const p of parts) if (p.v1) v1.route('/', p.v1);
  answerUnknownRoutes(v1); // last: it answers whatever no family above serves
  // Extension routes (/api/models, /api/keys, …); the conductor's /api middleware authenticates them.
  const api = new Hono<AgentsEnv>();
  for (const p of parts) if (p.api) api.route('/', p.api);

  await startInOrder(parts);
  return {
    v1,
    api,
    serving: () => servingInOrder(parts),
    drain: () => drainInReverse(parts),
    close: () => stopInReverse(parts),
  };
}
