/** Workflows: DAGs of agent steps run as ordinary runs, durable across conductors; definitions, schedules, the plan stream. */
export { workflowsFeature } from './workflows.feature.ts';
