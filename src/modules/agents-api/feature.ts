import type { Hono } from 'hono';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/index.ts';
import type { Lifecycle } from '../../shared/lifecycle.ts';
import type { Logger } from '../../shared/log.ts';
import type { ConductorServices } from '../conductor/index.ts';
import type { AgentsEnv } from './context.ts';
import type { ResourceDeps } from './deps.ts';
import type { ModelCatalog } from './models/catalog.ts';
import type { ModelResolver } from './models/model-ref.ts';
import type { AgentSettings } from './settings.ts';
import type { Signals } from './turns/turn-inbox.ts';

/**
 * The agents API's feature contract, the conductor's (conductor/feature.ts) with `/v1` in place of `public`: a family
 * is one folder whose `index.ts` exports a factory `(deps) => AgentsFeatureParts`, listed one line each in
 * `features.ts`. `v1` parts are mounted under `/v1` (OpenAI-style errors, authenticated, rate limited); `api` parts
 * under `/api` (the conductor's middleware authenticates them).
 */
export interface AgentsFeatureParts extends Lifecycle {
  v1?: Hono<AgentsEnv>;
  api?: Hono<AgentsEnv>;
}

export type AgentsFeature = (deps: AgentsDeps) => AgentsFeatureParts;

export interface AgentsDeps {
  /** For the agents API's own tables only (agents, agent_sessions, agent_files, …); the conductor's are behind `conductor`. */
  db: Kysely<DB>;
  /** Runs, runner sessions, API keys and the secrets key, as narrow services. */
  conductor: ConductorServices;
  /** The resource services' deps (own db + the secret box for provider keys and vault credentials). */
  resources: ResourceDeps;
  models: ModelResolver;
  catalog: ModelCatalog;
  settings: AgentSettings;
  log: Logger;
  /** LISTEN/NOTIFY of the database (input handed between replicas); absent: such input is refused 409. */
  signals?: Signals;
  /** Aborted once the database is gone for good, its reason naming why (Database.lost); absent: never. */
  databaseLost?: AbortSignal;
}
