import { doc } from '../../../shared/route-doc.ts';
import { Hono } from 'hono';
import { readJson } from '../../../shared/http.ts';
import type { AgentsEnv } from '../context.ts';
import { readCursor } from '../../crud/index.ts';
import { CursorQuery, READ_ERRORS, WRITE_ERRORS } from '../wire.schema.ts';
import { AgentCreateParams, AgentDeleted, AgentObject, AgentPage, AgentUpdateParams } from './agent.schema.ts';
import { createAgent, deleteAgent, getAgent, listAgents, updateAgent, type AgentsDeps } from './agents.service.ts';

const DOCS = {
  create: doc({
    summary: 'Create an agent',
    description:
      'Saves an agent configuration (model, instructions, tools, reasoning, text format) that sessions copy; the answer has every omitted setting resolved to its default. An agent never runs on its own: create a session with its `agent_id`.',
    body: AgentCreateParams,
    response: AgentObject,
    errors: WRITE_ERRORS,
  }),
  list: doc({ summary: 'List agents', description: 'The saved agents of the organisation, newest first by default, one cursor page at a time.', query: CursorQuery, response: AgentPage, errors: READ_ERRORS }),
  get: doc({ summary: 'Get an agent', description: 'One saved agent, every setting resolved.', response: AgentObject, errors: READ_ERRORS }),
  update: doc({
    summary: 'Update an agent',
    description: 'Changes only the fields sent; `null` resets a field to its default (`metadata` to `{}`, `name` to null). Existing sessions keep the configuration they were created with.',
    body: AgentUpdateParams,
    response: AgentObject,
    errors: WRITE_ERRORS,
  }),
  delete: doc({ summary: 'Delete an agent', description: 'Deletes the saved agent; the sessions created from it keep their own copy of its configuration.', response: AgentDeleted, errors: WRITE_ERRORS }),
};

/**
 * Routes 1-5 (`/agents`). Mounted after the sessions and environments sub-apps, so their literal segments win over
 * `/agents/{agent_id}` (spec §8.14).
 */
export function agentRoutes(deps: AgentsDeps): Hono<AgentsEnv> {
  const tenant = (c: { get(k: 'principal'): { tenantId: string } }) => c.get('principal').tenantId;
  return new Hono<AgentsEnv>()
    .post('/', DOCS.create, async (c) => c.json(await createAgent(deps, tenant(c), await readJson(c, AgentCreateParams))))
    .get('/', DOCS.list, async (c) => c.json(await listAgents(deps, tenant(c), readCursor(c))))
    .get('/:agent_id', DOCS.get, async (c) => c.json(await getAgent(deps, tenant(c), c.req.param('agent_id'))))
    .post('/:agent_id', DOCS.update, async (c) => c.json(await updateAgent(deps, tenant(c), c.req.param('agent_id'), await readJson(c, AgentUpdateParams))))
    .delete('/:agent_id', DOCS.delete, async (c) => c.json(await deleteAgent(deps, tenant(c), c.req.param('agent_id'))));
}
