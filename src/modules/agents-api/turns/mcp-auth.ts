import type { ResourceDeps } from '../deps.ts';
import type { SessionRow } from '../sessions/sessions.repo.ts';
import { mcpBearer } from '../vaults/mcp-auth.ts';
import { openSecrets } from './launch.ts';

/**
 * The bearer of each HTTP MCP tool of a session's turn that takes one from the session's vaults (its `credential_id`,
 * or the one credential whose server URL is the tool's), by server label. A session MCP tool given its own
 * `authorization` keeps it. A credential that cannot be applied (named but absent, expired without a refresh, a failed
 * refresh) throws, and the turn fails with that message.
 */
export async function mcpBearers(deps: ResourceDeps, tenantId: string, row: SessionRow): Promise<Map<string, string>> {
  const bearers = new Map<string, string>();
  const secrets = openSecrets(deps.box, tenantId, row.id, row.secrets);
  for (const tool of row.agent.tools) {
    if (tool.type !== 'mcp') continue;
    const transport = tool.transport as { type: string; server_url?: string };
    const label = tool.server_label as string;
    if (transport.type !== 'http' || !transport.server_url || secrets.mcp?.[label]?.authorization) continue;
    const bearer = await mcpBearer(deps, tenantId, { vaultIds: row.vault_ids, serverUrl: transport.server_url, credentialId: (tool.credential_id as string | null | undefined) ?? null, label });
    if (bearer) bearers.set(label, bearer);
  }
  return bearers;
}
