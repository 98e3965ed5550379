import type { WorkerRunRequest } from '../../../../contracts/worker.ts';
import { APPROVAL_HOLD_MAX_S } from '../../../../contracts/approvals.ts';
import { toolNameSafe } from '../general/tool-names.ts';

/**
 * The MCP servers an SDK runtime connects for a run: the runner's session toolkit as server `svc` (with host tools
 * off, this is where the agent's tools come from), then the profile's servers under safe names (at the runner, which
 * fronts them so its permission gate sees their calls, as it sees the toolkit's). Also maps the
 * profile's tool allowlist (the general runtime's names: `echo` for session tools, `<server>__<tool>` for the others)
 * onto per-server tool lists.
 */
export const SESSION_MCP_SERVER = 'svc';

export interface McpServerEntry {
  name: string;
  url: string;
  headers: Record<string, string> | undefined;
  transport: 'http' | 'sse';
  /** How events name this server's tools: '' for the session toolkit, else the spec's `toolPrefix` or `<name>__`. */
  toolPrefix: string;
  /** A tenant's server (not the session toolkit, not svc's own): reached under the address policy (mcp-egress.ts). Set by mcpServersOf. */
  tenant?: boolean;
  /**
   * How long one call may wait for its answer, where the SDK's own bound is shorter (Codex: 60 s). The session toolkit
   * and the servers the runner fronts may hold a call while a person decides (contracts/approvals.ts).
   */
  callTimeoutMs?: number;
}

/** The session toolkit's longest call: an approval's longest hold, and some. */
export const SESSION_TOOLKIT_CALL_MS = (APPROVAL_HOLD_MAX_S + 300) * 1000;

export function mcpServersOf(req: WorkerRunRequest): { servers: McpServerEntry[]; notes: string[] } {
  const servers: McpServerEntry[] = [];
  const notes: string[] = [];
  if (req.sessionMcpUrl) servers.push({ name: SESSION_MCP_SERVER, url: req.sessionMcpUrl, headers: undefined, transport: 'http', toolPrefix: '', tenant: false, callTimeoutMs: SESSION_TOOLKIT_CALL_MS });
  else notes.push('session toolkit unavailable: no sessionMcpUrl given; continuing without it');
  for (const spec of req.mcpServers ?? []) {
    // Names become config keys and tool-name prefixes; `svc` is taken by the session toolkit.
    if (!spec.url) {
      notes.push(`MCP server ${spec.name} skipped: a ${spec.transport} server is started by the runner, and none was`);
      continue;
    }
    const name = toolNameSafe(spec.name).replace(/__+/g, '_');
    if (name === SESSION_MCP_SERVER || servers.some((s) => s.name === name)) {
      notes.push(`MCP server ${spec.name} skipped: its name clashes with ${name === SESSION_MCP_SERVER ? 'the session toolkit' : 'another server'}`);
      continue;
    }
    servers.push({
      name,
      url: spec.url,
      headers: spec.headers,
      transport: spec.transport === 'sse' ? 'sse' : 'http',
      toolPrefix: spec.toolPrefix ?? `${name}__`,
      tenant: !spec.platform,
      ...(spec.callTimeoutMs ? { callTimeoutMs: spec.callTimeoutMs } : {}),
    });
  }
  return { servers, notes };
}

/** The name events give a server's tool (the general runtime's names: `echo`, `ext__read`). */
export function eventToolName(servers: readonly McpServerEntry[], server: string, tool: string): string {
  const entry = servers.find((s) => s.name === server);
  return `${entry ? entry.toolPrefix : `${server}__`}${tool}`;
}

/**
 * The allowlist per server, or undefined when the profile names no plain tools (selectors such as `@default` are
 * resolved by the runner's toolkit and filter nothing here).
 */
export function allowedToolsByServer(tools: readonly string[] | undefined, servers: readonly McpServerEntry[]): Map<string, string[]> | undefined {
  const names = (tools ?? []).filter((t) => !t.startsWith('@'));
  if (names.length === 0) return undefined;
  const byServer = new Map<string, string[]>(servers.map((s) => [s.name, []]));
  for (const name of names) {
    const sep = name.indexOf('__');
    const server = sep > 0 && byServer.has(name.slice(0, sep)) ? name.slice(0, sep) : SESSION_MCP_SERVER;
    byServer.get(server)?.push(server === SESSION_MCP_SERVER ? name : name.slice(sep + 2));
  }
  return byServer;
}
