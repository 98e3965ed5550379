import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { withTenant } from '../../../db/index.ts';
import { badRequest, notFound } from '../../../shared/errors.ts';
import { mcpUrlProblem, memoryStores } from '../../conductor/index.ts';
import type { PrivateAddresses } from '../../../shared/egress/index.ts';
import { prefixedId } from '../../../shared/ids.ts';
import type { ModelResolver } from '../models/model-ref.ts';
import { cursorPage, deletedObject, findOr404, type CursorPage, type CursorQuery } from '../../crud/index.ts';
import type { Agent, AgentConfig } from '../wire.ts';
import { applyUpdate, configFromCreate } from './agent.config.ts';
import type { AgentCreateParams, AgentUpdateParams } from './agent.schema.ts';
import { deleteAgent as deleteRow, getAgentRow, insertAgent, listAgents as listRows, toAgent, updateAgent as updateRow } from './agents.repo.ts';

/** Saved agents (`client.beta.agents`): configurations that sessions copy; an agent never runs on its own. */
export interface AgentsDeps {
  db: Kysely<DB>;
  models: ModelResolver;
  /** SVC_PRIVATE_ADDRESSES (conductor runs/mcp-address.ts); absent: allow. */
  privateAddresses?: PrivateAddresses;
}

/** A 400 naming the first remote MCP server whose URL the address policy refuses as written. */
function refuseInternalMcp(deps: AgentsDeps, tools: AgentCreateParams['tools']): void {
  if (!tools) return;
  const servers = tools.flatMap((tool, i) => {
    const transport = tool.type === 'mcp' ? (tool.transport as { type: string; server_url?: string }) : undefined;
    return transport?.type === 'http' && transport.server_url ? [{ url: transport.server_url, field: `tools[${i}].transport.server_url` }] : [];
  });
  const problem = mcpUrlProblem(servers, deps.privateAddresses);
  if (problem) throw badRequest(problem);
}

export const noSuchAgent = (id: string) => notFound(`No agent found with id '${id}'.`);

export async function createAgent(deps: AgentsDeps, tenantId: string, p: AgentCreateParams): Promise<Agent> {
  deps.models.parse(p.model);
  refuseInternalMcp(deps, p.tools);
  await memoryStores.assertStoresExist(deps.db, tenantId, p.memory_stores ?? undefined, 'memory_stores');
  return withTenant(deps.db, tenantId, (tx) => insertAgent(tx, tenantId, prefixedId('agent', 24), configFromCreate(p)));
}

export async function getAgent(deps: AgentsDeps, tenantId: string, id: string): Promise<Agent> {
  const row = await withTenant(deps.db, tenantId, (tx) => getAgentRow(tx, id));
  if (!row) throw noSuchAgent(id);
  return toAgent(row);
}

/** The stored configuration a new session copies; 404 for another organisation's or an unknown agent. */
export async function getAgentConfig(deps: AgentsDeps, tenantId: string, id: string): Promise<AgentConfig> {
  return (await getAgent(deps, tenantId, id)) satisfies AgentConfig;
}

export async function updateAgent(deps: AgentsDeps, tenantId: string, id: string, p: AgentUpdateParams): Promise<Agent> {
  if (p.model !== undefined) deps.models.parse(p.model);
  refuseInternalMcp(deps, p.tools);
  await memoryStores.assertStoresExist(deps.db, tenantId, p.memory_stores ?? undefined, 'memory_stores');
  return withTenant(deps.db, tenantId, async (tx) => {
    const row = await getAgentRow(tx, id);
    if (!row) throw noSuchAgent(id);
    return updateRow(tx, id, applyUpdate(row.config, p));
  });
}

export async function listAgents(deps: AgentsDeps, tenantId: string, q: CursorQuery): Promise<CursorPage<Agent>> {
  return cursorPage(await withTenant(deps.db, tenantId, (tx) => listRows(tx, q)), q.limit);
}

/** Deleting an agent leaves its sessions alone: each holds its own snapshot. */
export async function deleteAgent(deps: AgentsDeps, tenantId: string, id: string): Promise<{ id: string; deleted: true; object: 'agent.deleted' }> {
  await findOr404(withTenant(deps.db, tenantId, (tx) => deleteRow(tx, id)), () => noSuchAgent(id));
  return deletedObject(id, 'agent.deleted');
}
