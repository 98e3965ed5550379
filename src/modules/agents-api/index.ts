/** The `/v1` agents API module's door: the factory (agents-api.ts), its deps, and the family contract. */
export { createAgentsApi, type AgentsApi, type AgentsApiDeps } from './agents-api.ts';
export type { AgentsFeature, AgentsFeatureParts, AgentsDeps } from './feature.ts';
