import { Hono } from 'hono';
import type { AgentsEnv } from '../context.ts';
import { createEventStore } from '../events/event-store.ts';
import { eventRoutes } from '../events/events.routes.ts';
import type { AgentsFeature } from '../feature.ts';
import { createSubagents } from '../subagents/subagents.service.ts';
import { createTurnEngine } from '../turns/engine.ts';
import { functionToolRoutes } from '../turns/function-tools.routes.ts';
import { publishArtifacts } from './artifacts.service.ts';
import { environmentHooks } from '../environments/environment-turns.ts';
import { sessionRoutes } from './sessions.routes.ts';

/**
 * Agent sessions, their turns and events: `/v1/agents/sessions…` (before `/v1/agents`, so `/agents/sessions…` beats
 * `/agents/{agent_id}`, spec §8.14) and the function-tool MCP endpoint under `/api`. Builds the turn engine and the
 * session event store on the conductor's run services; at start it ends the turns a previous run of this conductor
 * left in progress.
 */
export const sessionsFeature: AgentsFeature = ({ db, conductor, resources, models, settings, log: parent, signals, databaseLost }) => {
  const log = parent;
  const store = createEventStore({ db, log: log.child('events'), databaseLost });
  const artifacts = { db, conductor, resources, log: log.child('artifacts') };
  const onTurnEnd = async (tenantId: string, sessionId: string, turnId: string) => void (await publishArtifacts(artifacts, tenantId, sessionId, turnId));
  const engine = createTurnEngine({ db, conductor, store, models, box: resources.box, selfUrl: settings.selfUrl, log: log.child('turns'), onTurnEnd, followKeepAliveMs: settings.keepAliveMs, environments: environmentHooks({ conductor, resources }), signals, turnDeadlineMs: settings.turnDeadlineMs });
  const subagents = createSubagents({ db, conductor, store, models, box: resources.box, engine, selfUrl: settings.selfUrl, log: log.child('subagents'), keepAliveMs: settings.keepAliveMs, turnDeadlineMs: settings.turnDeadlineMs });
  const sessions = { db, conductor, resources, store, models, engine, subagents, log, keepAliveMs: settings.keepAliveMs };
  let recovered: Promise<void> = Promise.resolve();
  return {
    v1: new Hono<AgentsEnv>()
      .route('/agents/sessions', eventRoutes({ db, engine, store, keepAliveMs: settings.keepAliveMs }))
      .route('/agents/sessions', sessionRoutes(sessions)),
    api: new Hono<AgentsEnv>().route('/', functionToolRoutes({ db, conductor, engine, subagents, version: settings.version })),
    async start() {
      await engine.start();
    },
    serving() {
      // turns left in progress by a previous run of this conductor (its runs were interrupted at boot) end now, in the background
      recovered = Promise.all([engine.recover(), subagents.recover()]).then(
        () => {},
        (err) => log.warn('recovering session turns failed', { error: String(err) }),
      );
    },
    /** After the conductor's drain: let the interrupted turns announce their end, then end every event stream. */
    async drain() {
      await recovered;
      await engine.settled(2000);
      await subagents.settled(2000);
      await store.close();
    },
    async stop() {
      await recovered;
      await engine.close();
      await store.close();
    },
  };
};
