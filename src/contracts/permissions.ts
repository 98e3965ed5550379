import { CAPABILITY_BUNDLES, TOOL_NAMES, type ToolName } from './toolkit.ts';

/**
 * Profile `permissions` (issue 40): a map from a tool selector to `allow`, `ask` or `deny`, read by the gate every call
 * of svc's toolkit passes on the runner (runner/toolkit). The conductor validates a profile's map with
 * `permissionsProblem`; the runner resolves a call with `permissionFor`.
 *
 * Selectors: a toolkit tool name (`run_command`), a capability bundle (`@exec`), or `*`. The most specific selector
 * that covers the tool wins: a tool name, then the smallest bundle that holds it, then `*`; between equally specific
 * selectors the strictest value wins (deny over ask over allow). A tool no selector covers is `allow`.
 *
 * `mcp:<server>/<tool>` selectors are refused for now: a profile's MCP servers are reached by the worker directly, not
 * through the runner, so the gate cannot see their calls, and a policy it cannot enforce must not look enforced. For
 * the same reason `*` may be `ask` or `deny` only on a profile without MCP servers.
 */
export const PERMISSIONS = ['allow', 'ask', 'deny'] as const;
export type Permission = (typeof PERMISSIONS)[number];
export type PermissionMap = Record<string, Permission>;

const STRICTNESS: Record<Permission, number> = { allow: 0, ask: 1, deny: 2 };

/** The first problem with a profile's `permissions` (`permissions.<selector>: …`), or undefined when it is fine. */
export function permissionsProblem(permissions: unknown, profile: { mcpServers?: readonly { name: string }[] | undefined }): string | undefined {
  if (permissions === undefined) return undefined;
  if (permissions === null || typeof permissions !== 'object' || Array.isArray(permissions)) return 'permissions: expected an object mapping tool selectors to allow, ask or deny';
  for (const [selector, value] of Object.entries(permissions as Record<string, unknown>)) {
    const at = `permissions.${selector}`;
    if (!(PERMISSIONS as readonly unknown[]).includes(value)) return `${at}: expected allow, ask or deny`;
    if (selector === '*') {
      if (value !== 'allow' && profile.mcpServers?.length) {
        return `${at}: ${value} cannot cover the profile's MCP servers (${profile.mcpServers.map((s) => s.name).join(', ')}): their calls do not pass the runner's permission gate yet; name the toolkit tools or bundles instead`;
      }
      continue;
    }
    if (selector.startsWith('mcp:')) return `${at}: MCP server tools do not pass the runner's permission gate yet, so a policy on them cannot be enforced`;
    if (selector.startsWith('@')) {
      if (!CAPABILITY_BUNDLES.some((b) => b.value === selector)) return `${at}: unknown bundle; expected one of ${CAPABILITY_BUNDLES.map((b) => b.value).join(', ')}`;
      continue;
    }
    if (!(TOOL_NAMES as readonly string[]).includes(selector)) return `${at}: unknown tool; expected a toolkit tool (${TOOL_NAMES.join(', ')}), a bundle such as @exec, or *`;
  }
  return undefined;
}

/** What the policy says about one toolkit tool (see the rules above). */
export function permissionFor(permissions: PermissionMap | undefined, tool: ToolName | string): { permission: Permission; selector: string | undefined } {
  if (!permissions) return { permission: 'allow', selector: undefined };
  // specificity: 0 a tool name, 1 + bundle size a bundle, 1000 `*`
  let best: { rank: number; permission: Permission; selector: string } | undefined;
  const consider = (rank: number, selector: string) => {
    const permission = permissions[selector];
    if (!permission) return;
    if (!best || rank < best.rank || (rank === best.rank && STRICTNESS[permission] > STRICTNESS[best.permission])) best = { rank, permission, selector };
  };
  consider(0, tool);
  for (const bundle of CAPABILITY_BUNDLES) if ((bundle.tools as readonly string[]).includes(tool)) consider(1 + bundle.tools.length, bundle.value);
  consider(1000, '*');
  return best ? { permission: best.permission, selector: best.selector } : { permission: 'allow', selector: undefined };
}
