import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { withTenant } from '../../../db/index.ts';
import type { ProfileSpec } from '../../../contracts/runner.client.ts';
import { AppError } from '../../../shared/errors.ts';
import { listConnections } from '../apps/index.ts';
import { credentialShaped } from '../kits/sanitize.ts';
import { knownSkillNames } from '../skills/index.ts';

/**
 * Whether a profile's dependencies are ready before a run starts (seed 000, run creation rule 7): every skill it names
 * is installed in the tenant's catalog, every credential its MCP servers carry is filled in (a kit copy leaves
 * credential-shaped header and URL values empty, to be filled in), and every connected app that provides one of its
 * MCP servers is connected. Otherwise 409, naming each missing one (`missing` lists them for programs).
 */
export interface Missing {
  kind: 'skill' | 'mcp_credential' | 'connected_app';
  name: string;
  detail: string;
}

export async function assertProfileReady(db: Kysely<DB>, tenantId: string, profile: ProfileSpec): Promise<void> {
  const wanted = [...new Set(profile.skills ?? [])];
  const servers = profile.mcpServers ?? [];
  if (wanted.length === 0 && servers.length === 0) return; // nothing to look up: no round trip
  const [skills, connections] = await withTenant(db, tenantId, async (tx) => [await knownSkillNames(tx, wanted), servers.length ? await listConnections(tx) : []] as const);
  const installed = new Set(skills.map((s) => s.name));
  const missing: Missing[] = wanted.filter((n) => !installed.has(n)).map((name) => ({ kind: 'skill', name, detail: `skill ${name} is not installed` }));
  for (const server of servers) {
    for (const [header, value] of Object.entries(server.headers ?? {})) {
      if (value.trim() === '' && credentialShaped(header, value)) {
        missing.push({ kind: 'mcp_credential', name: `${server.name}.headers.${header}`, detail: `MCP server ${server.name}: credential header ${header} is empty` });
      }
    }
    for (const param of emptyCredentialParams(server.url)) {
      missing.push({ kind: 'mcp_credential', name: `${server.name}.url?${param}`, detail: `MCP server ${server.name}: credential ${param} in its URL is empty` });
    }
    const app = connections.find((c) => c.mcpServerName === server.name);
    if (app && app.status !== 'active') {
      missing.push({ kind: 'connected_app', name: app.provider, detail: `MCP server ${server.name}: connected app ${app.provider} (${app.appSlug}) is ${app.status}, not connected` });
    }
  }
  if (missing.length === 0) return;
  throw new AppError(409, `profile ${profile.name} is not ready: ${missing.map((m) => m.detail).join('; ')}`, { code: 'dependencies_not_ready', extra: { missing } });
}

function emptyCredentialParams(url: string | undefined): string[] {
  if (!url) return [];
  try {
    return [...new URL(url).searchParams].filter(([k, v]) => v.trim() === '' && credentialShaped(k, v)).map(([k]) => k);
  } catch {
    return [];
  }
}
