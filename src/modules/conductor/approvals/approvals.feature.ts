import type { Feature } from '../feature.ts';
import { cancelPendingOfRun } from './approvals.repo.ts';
import { approvalRoutes } from './approvals.routes.ts';
import { approvalDepsOf, EXPIRE_QUEUE, expire, type ExpireJob } from './approvals.service.ts';
import { RESUME_QUEUE, resumeParked, type ResumeJob } from '../runs/parking.ts';

/**
 * Approvals of tool calls under an `ask` permission: the routes, the expiry queue (one job per approval, due at its
 * `expiresAt`), the resume queue of parked runs (runs/parking.ts: one job per decision on a parked run), and the run
 * hook that cancels what a run that ended left pending.
 */
export const approvalsFeature: Feature = (ctx) => {
  const { jobs, hooks, runs } = ctx;
  const deps = approvalDepsOf(ctx);
  hooks.onRunEnding((tx, tenantId, runId) => cancelPendingOfRun(tx, tenantId, runId));
  return {
    api: approvalRoutes(deps),
    start: async () => {
      await jobs.define<ExpireJob>(EXPIRE_QUEUE, (job) => expire(deps, job), { retryLimit: 10, retryDelay: 1, retryBackoff: true, retryDelayMax: 60, pollingIntervalSeconds: 0.5 });
      // retried while no runner can take the session (the run stays parked meanwhile)
      await jobs.define<ResumeJob>(RESUME_QUEUE, (job) => resumeParked(runs.deps, job), { retryLimit: 30, retryDelay: 1, retryBackoff: true, retryDelayMax: 60, pollingIntervalSeconds: 0.5 });
    },
  };
};
