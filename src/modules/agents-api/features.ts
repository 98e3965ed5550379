import { agentsFeature } from './agents/index.ts';
import { environmentsFeature } from './environments/index.ts';
import { extensionsFeature } from './extensions/index.ts';
import type { AgentsFeature } from './feature.ts';
import { filesFeature } from './files/index.ts';
import { memoryStoresFeature } from './memory/index.ts';
import { modelsFeature } from './models/index.ts';
import { sessionsFeature } from './sessions/index.ts';
import { skillsFeature } from './skills/index.ts';
import { vaultsFeature } from './vaults/index.ts';

/**
 * The agents API's families, one line each, mounted in this order (environments and sessions before agents: their
 * `/agents/…` paths must beat `/agents/{agent_id}`), started in order and drained and stopped in reverse.
 */
export const AGENTS_FEATURES: readonly AgentsFeature[] = [
  filesFeature,
  skillsFeature,
  vaultsFeature,
  memoryStoresFeature,
  environmentsFeature,
  sessionsFeature,
  agentsFeature,
  modelsFeature,
  extensionsFeature,
];
