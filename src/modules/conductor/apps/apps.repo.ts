import type { Tx } from '../../../db/index.ts';
import { prefixedId } from '../../../shared/ids.ts';

/** SQL for connected apps (tenant-scoped by row-level security). */
export interface Connection {
  id: string;
  provider: string;
  appSlug: string;
  scope: string;
  status: 'active' | 'pending' | 'error' | 'revoked';
  mcpServerName: string | null;
  createdAt: string;
}

export async function listConnections(tx: Tx): Promise<Connection[]> {
  const rows = await tx
    .selectFrom('connected_apps')
    .select(['id', 'provider', 'app_slug', 'scope', 'status', 'mcp_server_name', 'created_at'])
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map((r) => ({
    id: r.id,
    provider: r.provider,
    appSlug: r.app_slug,
    scope: r.scope,
    status: r.status,
    mcpServerName: r.mcp_server_name,
    createdAt: new Date(r.created_at).toISOString(),
  }));
}

export async function insertConnection(
  tx: Tx,
  c: { tenantId: string; provider: string; appSlug: string; scope?: string; status?: Connection['status']; mcpServerName?: string | null },
): Promise<string> {
  const id = prefixedId('conn');
  await tx
    .insertInto('connected_apps')
    .values({ id, tenant_id: c.tenantId, provider: c.provider, app_slug: c.appSlug, scope: c.scope ?? '', status: c.status ?? 'active', mcp_server_name: c.mcpServerName ?? null })
    .execute();
  return id;
}
