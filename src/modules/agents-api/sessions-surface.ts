import type { Hono } from 'hono';
import type { ConductorServices } from '../conductor/index.ts';
import { createLogger } from '../../shared/log.ts';
import { agentRoutes } from './agents/agents.routes.ts';
import type { AgentsEnv } from './context.ts';
import type { ResourceDeps } from './deps.ts';
import { createEventStore } from './events/event-store.ts';
import { eventRoutes } from './events/events.routes.ts';
import { providerKey } from './extensions/provider-keys.ts';
import { createModelCatalog } from './models/catalog.ts';
import { createModelResolver, type Aggregator } from './models/model-ref.ts';
import { apiModelRoutes, v1ModelRoutes } from './models/models.routes.ts';
import { publishArtifacts } from './sessions/artifacts.service.ts';
import { sessionRoutes } from './sessions/sessions.routes.ts';
import { createTurnEngine } from './turns/engine.ts';
import { functionToolRoutes } from './turns/function-tools.routes.ts';

/**
 * Agents, sessions, turns, events and models: the part of the agents API that runs agents. Builds the turn engine and
 * the session event store on the conductor's services and mounts their routes (after the environments sub-app, so
 * `/agents/sessions…` and `/agents/environments…` beat `/agents/{agent_id}`, spec §8.14).
 */
export interface AgentSettings {
  /** Operator-configured aggregators behind `svc/<name>/<model id>` (config `agents.aggregators`). */
  aggregators: Readonly<Record<string, Aggregator>>;
  keepAliveMs: number;
  /** Base URL at which workers reach this conductor (the function-tool endpoint). */
  selfUrl: string;
  version: string;
}

export const DEFAULT_AGENT_SETTINGS: AgentSettings = { aggregators: {}, keepAliveMs: 15_000, selfUrl: 'http://127.0.0.1:8080', version: '0.0.0' };

export function createSessionsSurface(conductor: ConductorServices, resources: ResourceDeps, settings: AgentSettings) {
  const log = createLogger('agents');
  const db = conductor.db;
  const models = createModelResolver({
    aggregators: settings.aggregators,
    providerKeys: async (tenantId, provider) => {
      const apiKey = await providerKey(resources, tenantId, provider);
      return apiKey ? { apiKey } : undefined;
    },
  });
  const catalog = createModelCatalog(settings.aggregators);
  const store = createEventStore({ db, log: log.child('events') });
  const runDeps = conductor.runDeps;
  const artifacts = { db, runDeps, resources, log: log.child('artifacts') };
  const onTurnEnd = async (tenantId: string, sessionId: string, turnId: string) => void (await publishArtifacts(artifacts, tenantId, sessionId, turnId));
  const engine = createTurnEngine({ db, runDeps, store, models, box: resources.box, selfUrl: settings.selfUrl, log: log.child('turns'), onTurnEnd, followKeepAliveMs: settings.keepAliveMs });
  const sessions = { db, runDeps, resources, store, models, engine, log, keepAliveMs: settings.keepAliveMs };
  // turns left in progress by a previous run of this conductor (its runs were interrupted at boot) end now
  const recovered = engine.recover().catch((err) => log.warn('recovering session turns failed', { error: String(err) }));

  return {
    mountV1(v1: Hono<AgentsEnv>): void {
      v1.route('/agents/sessions', eventRoutes({ db, engine, store, keepAliveMs: settings.keepAliveMs }));
      v1.route('/agents/sessions', sessionRoutes(sessions));
      v1.route('/agents', agentRoutes({ db, models }));
      v1.route('/models', v1ModelRoutes({ db, resources, models, catalog }));
    },
    mountApi(api: Hono<AgentsEnv>): void {
      api.route('/', apiModelRoutes({ db, resources, models, catalog }));
      api.route('/', functionToolRoutes({ db, runDeps, engine, version: settings.version }));
    },
    /** After the conductor's drain: let the interrupted turns announce their end, then end every event stream. */
    async drain() {
      await recovered;
      await engine.settled(2000);
      await store.close();
    },
    async close() {
      await recovered;
      await engine.close();
      await store.close();
    },
  };
}
