/** `/v1/agents/environments`: environment templates and hosted environments. */
export { environmentsFeature } from './environments.feature.ts';
