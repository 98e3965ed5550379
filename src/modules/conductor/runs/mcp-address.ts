import { badRequest } from '../../../shared/errors.ts';
import { checkUrl, resolvedProblem, type PrivateAddresses, type Resolve } from '../../../shared/egress/index.ts';

/**
 * The address policy (shared/egress, SVC_PRIVATE_ADDRESSES) applied to tenants' remote MCP server URLs: those of
 * profiles and /v1 agents, which workers connect to from inside the operator's network. A URL naming an internal
 * address is refused when it is saved (400, naming its field); one whose name resolves to such an address is refused
 * when a run starts (the run, or the /v1 turn, fails with the reason); and the worker's connection is checked again
 * when it is made (the general runtime's MCP client goes through the guarded fetcher).
 */

/** The problem with the first MCP server URL the policy refuses as written, prefixed with its field, or undefined. */
export function mcpUrlProblem(servers: ReadonlyArray<{ url: string; field: string }>, policy: PrivateAddresses | undefined): string | undefined {
  for (const s of servers) {
    const problem = checkUrl(s.url, policy ?? 'allow');
    if (problem) return `${s.field}: ${problem}`;
  }
  return undefined;
}

/** Before a run: refuses (400) when a tenant's MCP server URL names, or resolves to, an address the policy refuses. */
export async function refusePrivateMcp(servers: ReadonlyArray<{ name: string; url: string }>, policy: PrivateAddresses | undefined, resolve?: Resolve): Promise<void> {
  for (const s of servers) {
    const problem = await resolvedProblem(s.url, policy ?? 'allow', resolve);
    if (problem) throw badRequest(`MCP server "${s.name}": ${problem}`);
  }
}
