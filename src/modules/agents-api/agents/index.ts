/** `/v1/agents`: saved agent configurations. */
export { agentsFeature } from './agents.feature.ts';
