import { Hono } from 'hono';
import { startSideBySide } from '../../../shared/lifecycle.ts';
import type { Feature } from '../feature.ts';
import type { IdentityEnv } from '../identity/index.ts';
import { stopLocally } from './cancel.ts';
import { runRoutes } from './runs.routes.ts';

/**
 * `/api/runs`, and the run machinery's lifecycle: the live hub and the ownership lease start first; at a graceful stop
 * the runs this conductor drives end `interrupted` with their terminal event, then the event log flushes.
 */
export const runsFeature: Feature = ({ runs }) => ({
  api: new Hono<IdentityEnv>().route('/runs', runRoutes({ ...runs.deps, keepAliveMs: 15_000 })),
  async start() {
    // the hub's LISTENs, and the lease with the sweep of the runs this conductor's id left behind
    await startSideBySide([runs.hub, runs.ownership]);
  },
  async drain() {
    // Runs we drive cannot finish once we are gone: end them `interrupted` now, with their terminal event.
    runs.pauseQueue();
    for (const run of runs.active.all()) stopLocally(runs.deps, run.tenantId, run.runId, 'interrupted');
    await Promise.all(runs.active.all().map((r) => r.done));
    await runs.active.settled();
  },
  async stop() {
    await runs.eventLog.close();
    await runs.ownership.stop();
    await runs.hub.stop();
  },
});
