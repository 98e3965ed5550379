import type { Feature } from './feature.ts';
import { appsFeature } from './apps/index.ts';
import { approvalsFeature } from './approvals/index.ts';
import { automationsFeature } from './automations/index.ts';
import { billingFeature } from './billing/index.ts';
import { dashboardFeature } from './dashboard/index.ts';
import { deviceFeature } from './device/index.ts';
import { identityFeature } from './identity/index.ts';
import { jobsFeature } from './jobs/index.ts';
import { kitsFeature } from './kits/index.ts';
import { limitsFeature } from './limits/index.ts';
import { memoryFeature } from './memory/index.ts';
import { notificationsFeature } from './notifications/index.ts';
import { poolsFeature } from './pools/index.ts';
import { profilesFeature } from './profiles/index.ts';
import { publishingFeature } from './publishing/index.ts';
import { runnersFeature } from './runners/index.ts';
import { runsFeature } from './runs/index.ts';
import { sandboxLimitsFeature } from './sandbox-limits/index.ts';
import { sessionsFeature } from './sessions/index.ts';
import { skillsFeature } from './skills/index.ts';
import { toolkitFeature } from './toolkit/index.ts';
import { workflowsFeature } from './workflows/index.ts';

/**
 * The conductor's features, one line each (feature.ts says what a factory returns). Started in this order, drained
 * and stopped in reverse: the job queue starts first and stops last (the orphan sweep and runFinished ride on it), the
 * run machinery starts before the runners are reconciled, and at a stop the broadcaster halts before the runs in flight
 * are interrupted. A new family is one folder and one line here.
 */
export const FEATURES: readonly Feature[] = [
  identityFeature,
  jobsFeature,
  runsFeature,
  limitsFeature,
  runnersFeature,
  profilesFeature,
  sandboxLimitsFeature,
  poolsFeature,
  sessionsFeature,
  skillsFeature,
  notificationsFeature,
  approvalsFeature,
  memoryFeature,
  toolkitFeature,
  appsFeature,
  billingFeature,
  automationsFeature,
  workflowsFeature,
  publishingFeature,
  kitsFeature,
  deviceFeature,
  dashboardFeature,
];
