/** Publishing: published agents, agent keys (`pk_…`) and the chat gateway at `/chat/{slug}`. */
export { publishingFeature } from './publishing.feature.ts';
export { chatApprovalsOfRun } from './publishing.repo.ts';
