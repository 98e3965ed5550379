import { CAPABILITY_BUNDLES, TOOL_NAMES, type ToolName } from './toolkit.ts';

/**
 * Profile `permissions` (issue 40): a map from a tool selector to `allow`, `ask` or `deny`, read by the gate every call
 * of svc's toolkit, and every call to one of the profile's MCP servers, passes on the runner (runner/toolkit,
 * runner/mcp: the runner fronts those servers, so their calls pass the same gate). The conductor validates a profile's
 * map with `permissionsProblem`; the runner resolves a call with `permissionFor`.
 *
 * Selectors: a toolkit tool name (`run_command`), a capability bundle (`@exec`), an MCP server's tool
 * (`mcp:<server>/<tool>`, where `<server>` is one of the profile's MCP servers and `<tool>` may hold `*` globs:
 * `mcp:github/*`, `mcp:github/create_*`), or `*`. A call's identity is its toolkit tool name, or `mcp:<server>/<tool>`
 * for an MCP server's tool. The most specific selector that covers the call wins, in this order:
 *   1. a toolkit tool's exact name;
 *   2. an MCP tool's exact selector (`mcp:github/create_issue`);
 *   3. an MCP glob (`mcp:github/create_*` before `mcp:github/*`: more literal characters first);
 *   4. a bundle (the smallest that holds the tool first; bundles hold toolkit tools only);
 *   5. `*`.
 * Between equally specific selectors the strictest value wins (deny over ask over allow). A call no selector covers is
 * `allow`.
 */
export const PERMISSIONS = ['allow', 'ask', 'deny'] as const;
export type Permission = (typeof PERMISSIONS)[number];
export type PermissionMap = Record<string, Permission>;

const STRICTNESS: Record<Permission, number> = { allow: 0, ask: 1, deny: 2 };
const MCP_PREFIX = 'mcp:';

/** The identity the gate resolves an MCP server's tool by: `mcp:<server>/<tool>`. */
export function mcpToolIdentity(server: string, tool: string): string {
  return `${MCP_PREFIX}${server}/${tool}`;
}

/** `mcp:<server>/<tool>` split at its first `/`, or undefined when the selector is not of that shape. */
function mcpSelector(selector: string): { server: string; tool: string } | undefined {
  if (!selector.startsWith(MCP_PREFIX)) return undefined;
  const rest = selector.slice(MCP_PREFIX.length);
  const slash = rest.indexOf('/');
  if (slash <= 0 || slash === rest.length - 1) return undefined;
  return { server: rest.slice(0, slash), tool: rest.slice(slash + 1) };
}

function globMatches(glob: string, name: string): boolean {
  const pattern = glob.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*');
  return new RegExp(`^${pattern}$`).test(name);
}

/** The first problem with a profile's `permissions` (`permissions.<selector>: …`), or undefined when it is fine. */
export function permissionsProblem(permissions: unknown, profile: { mcpServers?: readonly { name: string }[] | undefined }): string | undefined {
  if (permissions === undefined) return undefined;
  if (permissions === null || typeof permissions !== 'object' || Array.isArray(permissions)) return 'permissions: expected an object mapping tool selectors to allow, ask or deny';
  const servers = (profile.mcpServers ?? []).map((s) => s.name);
  for (const [selector, value] of Object.entries(permissions as Record<string, unknown>)) {
    const at = `permissions.${selector}`;
    if (!(PERMISSIONS as readonly unknown[]).includes(value)) return `${at}: expected allow, ask or deny`;
    if (selector === '*') continue;
    if (selector.startsWith(MCP_PREFIX)) {
      const mcp = mcpSelector(selector);
      if (!mcp) return `${at}: expected mcp:<server>/<tool>, where <tool> may use * (mcp:github/*)`;
      if (!servers.includes(mcp.server)) {
        return `${at}: ${mcp.server} is not one of the profile's MCP servers (${servers.length ? servers.join(', ') : 'it has none'})`;
      }
      continue;
    }
    if (selector.startsWith('@')) {
      if (!CAPABILITY_BUNDLES.some((b) => b.value === selector)) return `${at}: unknown bundle; expected one of ${CAPABILITY_BUNDLES.map((b) => b.value).join(', ')}`;
      continue;
    }
    if (!(TOOL_NAMES as readonly string[]).includes(selector)) return `${at}: unknown tool; expected a toolkit tool (${TOOL_NAMES.join(', ')}), a bundle such as @exec, mcp:<server>/<tool>, or *`;
  }
  return undefined;
}

/** What the policy says about one call: a toolkit tool's name, or an MCP tool's `mcp:<server>/<tool>` (see the rules above). */
export function permissionFor(permissions: PermissionMap | undefined, tool: ToolName | string): { permission: Permission; selector: string | undefined } {
  if (!permissions) return { permission: 'allow', selector: undefined };
  // rank (lower wins): 0 a tool name, 1 an MCP exact selector, 2…999 an MCP glob (fewer literal characters: higher),
  // 1000 + bundle size a bundle, 10000 `*`
  let best: { rank: number; permission: Permission; selector: string } | undefined;
  const consider = (rank: number, selector: string) => {
    const permission = permissions[selector];
    if (!permission) return;
    if (!best || rank < best.rank || (rank === best.rank && STRICTNESS[permission] > STRICTNESS[best.permission])) best = { rank, permission, selector };
  };
  const call = mcpSelector(tool);
  if (call) {
    consider(1, tool);
    for (const selector of Object.keys(permissions)) {
      const mcp = selector.includes('*') ? mcpSelector(selector) : undefined;
      if (!mcp || mcp.server !== call.server || !globMatches(mcp.tool, call.tool)) continue;
      const literal = mcp.tool.replaceAll('*', '').length;
      consider(2 + Math.max(0, 900 - literal), selector);
    }
  } else {
    consider(0, tool);
    for (const bundle of CAPABILITY_BUNDLES) if ((bundle.tools as readonly string[]).includes(tool)) consider(1000 + bundle.tools.length, bundle.value);
  }
  consider(10000, '*');
  return best ? { permission: best.permission, selector: best.selector } : { permission: 'allow', selector: undefined };
}
