import { doc } from '../../../shared/route-doc.ts';
import { Hono } from 'hono';
import { readJson } from '../../../shared/http.ts';
import type { AgentsEnv } from '../context.ts';
import { readCursor } from '../../crud/index.ts';
import { AgentCreateParams, AgentUpdateParams } from './agent.schema.ts';
import { createAgent, deleteAgent, getAgent, listAgents, updateAgent, type AgentsDeps } from './agents.service.ts';

/**
 * Routes 1-5 (`/agents`). Mounted after the sessions and environments sub-apps, so their literal segments win over
 * `/agents/{agent_id}` (spec §8.14).
 */
export function agentRoutes(deps: AgentsDeps): Hono<AgentsEnv> {
  const tenant = (c: { get(k: 'principal'): { tenantId: string } }) => c.get('principal').tenantId;
  return new Hono<AgentsEnv>()
    .post('/', doc({ body: AgentCreateParams }), async (c) => c.json(await createAgent(deps, tenant(c), await readJson(c, AgentCreateParams))))
    .get('/', async (c) => c.json(await listAgents(deps, tenant(c), readCursor(c))))
    .get('/:agent_id', async (c) => c.json(await getAgent(deps, tenant(c), c.req.param('agent_id'))))
    .post('/:agent_id', doc({ body: AgentUpdateParams }), async (c) => c.json(await updateAgent(deps, tenant(c), c.req.param('agent_id'), await readJson(c, AgentUpdateParams))))
    .delete('/:agent_id', async (c) => c.json(await deleteAgent(deps, tenant(c), c.req.param('agent_id'))));
}
