import type { Tx } from '../../../db/index.ts';
import { jsonb } from '../../../db/index.ts';
import { keysetRows } from '../../crud/index.ts';
import type { CursorQuery } from '../../crud/index.ts';
import type { Agent, AgentConfig } from '../wire.ts';
import { unixSeconds } from '../wire.ts';

/** SQL for saved agents. Lists page by (created_at, id) in the requested order; `after` is exclusive. */
type AgentRow = { id: string; config: AgentConfig; created_at: Date; updated_at: Date };

export const toAgent = (r: AgentRow): Agent => ({
  id: r.id,
  object: 'agent',
  created_at: unixSeconds(r.created_at)!,
  updated_at: unixSeconds(r.updated_at)!,
  ...(r.config as AgentConfig),
});

const COLUMNS = ['id', 'config', 'created_at', 'updated_at'] as const;

export async function insertAgent(tx: Tx, tenantId: string, id: string, config: AgentConfig): Promise<Agent> {
  const row = await tx.insertInto('agents').values({ id, tenant_id: tenantId, config: jsonb(config) }).returning(COLUMNS).executeTakeFirstOrThrow();
  return toAgent(row as unknown as AgentRow);
}

export async function getAgentRow(tx: Tx, id: string): Promise<AgentRow | undefined> {
  return (await tx.selectFrom('agents').select(COLUMNS).where('id', '=', id).executeTakeFirst()) as unknown as AgentRow | undefined;
}

export async function updateAgent(tx: Tx, id: string, config: AgentConfig): Promise<Agent> {
  const row = await tx.updateTable('agents').set({ config: jsonb(config), updated_at: new Date() }).where('id', '=', id).returning(COLUMNS).executeTakeFirstOrThrow();
  return toAgent(row as unknown as AgentRow);
}

export async function deleteAgent(tx: Tx, id: string): Promise<boolean> {
  return (await tx.deleteFrom('agents').where('id', '=', id).returning('id').executeTakeFirst()) !== undefined;
}

/** `limit + 1` agents after the cursor (the extra row tells whether more exist); an unknown cursor yields an empty page. */
export async function listAgents(tx: Tx, q: CursorQuery): Promise<Agent[]> {
  const rows = await keysetRows(tx.selectFrom('agents').select(COLUMNS), 'agents', q);
  return (rows as unknown as AgentRow[]).map(toAgent);
}
