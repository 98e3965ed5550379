import type { Principal } from '../conductor/index.ts';

/** Request context of every /v1 route: who is calling (the tenant always comes from the credential). */
export type AgentsEnv = { Variables: { principal: Principal } };
