import { Hono } from 'hono';
import type { ConductorServices, Limiter } from '../conductor/index.ts';
import { answerUnknownRoutes, useOpenAiErrors } from './errors.ts';
import { v1LimitRules, type RateLimits } from './rate-limits.ts';
import type { AgentsEnv } from './context.ts';
import { createResourceDeps, denyViewerWrites, mountExtensions, mountResources } from './resources.ts';
import { createSessionsSurface, DEFAULT_AGENT_SETTINGS, type AgentSettings } from './sessions-surface.ts';

/**
 * The `/v1` agents API (seed 001, and ../shared/specs/agents-api-v1.md as the `openai` 7.15.0 SDK reads it), built on
 * the conductor's services: an agent session is a runner session with a snapshot of the agent, a turn is a run.
 * Returns the `/v1` app and the extension routes that live under `/api` (mounted by the composition root).
 */
export interface AgentsApi {
  v1: Hono<AgentsEnv>;
  api: Hono<AgentsEnv>;
  /** Called after the conductor's drain, before connections close: ends live turns' event streams cleanly. */
  drain(): Promise<void>;
  close(): Promise<void>;
}

export function createAgentsApi(deps: { conductor: ConductorServices; limiter: Limiter; limits?: RateLimits; settings?: Partial<AgentSettings> }): AgentsApi {
  const v1 = new Hono<AgentsEnv>();
  useOpenAiErrors(v1);
  v1.use('*', async (c, next) => {
    c.set('principal', await deps.conductor.authenticate(c.req.header('authorization')));
    await next();
  });
  v1.use('*', deps.limiter.middleware(v1LimitRules(deps.limits)));
  v1.use('*', denyViewerWrites);
  // Resource routes are mounted here, one sub-app per resource family.
  const resources = createResourceDeps(deps.conductor);
  mountResources(v1, resources);
  const agents = createSessionsSurface(deps.conductor, resources, { ...DEFAULT_AGENT_SETTINGS, ...deps.settings });
  agents.mountV1(v1);
  answerUnknownRoutes(v1); // last: it answers whatever no route above serves

  const api = new Hono<AgentsEnv>();
  // Extension routes (/api/models, /api/keys, …) are mounted here; the conductor's /api middleware authenticates.
  mountExtensions(api, resources, deps.conductor);
  agents.mountApi(api);

  return { v1, api, drain: () => agents.drain(), close: () => agents.close() };
}
