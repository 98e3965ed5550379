import { Hono } from 'hono';
import { describeError } from '../../../shared/errors.ts';
import type { Feature } from '../feature.ts';
import type { IdentityEnv } from '../identity/index.ts';
import { onRunFinished, sweep, WORKFLOW_ORIGIN } from './engine.ts';
import { createPlanFeed } from './plan-stream.ts';
import { definitionRoutes } from './definitions.routes.ts';
import { scheduleRoutes } from './schedules.routes.ts';
import { createWorkflowScheduler } from './schedules.service.ts';
import { runRoutes } from './workflows.routes.ts';

const SWEEP_MS = 5_000;

/**
 * `/api/workflows/*`, the `workflows` runFinished subscriber that moves plans on (on whichever conductor takes the
 * job), the plan stream's LISTEN, the schedules' slot loop, and a sweep for nodes whose run never started or whose end was not delivered (engine.ts).
 */
export const workflowsFeature: Feature = ({ db, database, runs, hooks, jobs, log, config }) => {
  const deps = { db, database, runs: runs.deps, jobs, log: log.child('workflows') };
  const feed = createPlanFeed(deps);
  const scheduler = createWorkflowScheduler(deps);
  let timer: NodeJS.Timeout | undefined;
  let sweeping: Promise<unknown> | undefined;
  return {
    api: new Hono<IdentityEnv>()
      .route('/workflows/runs', runRoutes({ ...deps, feed, keepAliveMs: config.agents.keepAliveMs }))
      .route('/workflows/definitions', definitionRoutes(deps))
      .route('/workflows/schedules', scheduleRoutes(deps)),
    async start() {
      await feed.start();
      await hooks.onRunFinished('workflows', (ev) => onRunFinished(deps, ev), { origins: [WORKFLOW_ORIGIN] });
    },
    serving() {
      timer = setInterval(() => {
        sweeping ??= sweep(deps)
          .catch((err) => deps.log.warn('workflow sweep failed', { error: describeError(err) }))
          .finally(() => (sweeping = undefined));
      }, SWEEP_MS);
      timer.unref();
      scheduler.start();
    },
    async drain() {
      clearInterval(timer);
      await scheduler.stop();
      await sweeping;
    },
    async stop() {
      await feed.stop();
    },
  };
};
