import { badRequest, describeError } from '../../../shared/errors.ts';
import { literalProblem, resolvedProblem } from '../notifications/webhook-address.ts';

/**
 * Where a tenant's remote (HTTP) MCP servers may be: the webhook rule (notifications/webhook-address.ts) applied to
 * the MCP server URLs of profiles and /v1 agents, which a worker connects to from inside the operator's network.
 * Unless the operator allows it (SVC_PRIVATE_MCP=allow, the default only in dev), a URL naming a loopback, private or
 * link-local address is refused when it is saved (400), and one whose host resolves to such an address is refused when
 * a run starts (the run, or the /v1 turn, fails with the reason). A name that changes its answer between this check
 * and the worker's connection is not caught; an egress proxy is the complete answer.
 */
export type PrivateMcp = 'allow' | 'deny';

const WHAT = 'MCP servers';

/** The problem with the first MCP server URL that names an internal address as written, or undefined. */
export function mcpLiteralProblem(servers: ReadonlyArray<{ url: string; field: string }>): string | undefined {
  for (const s of servers) {
    const problem = literalProblem(s.url, WHAT);
    if (problem) return `${s.field}: ${problem}`;
  }
  return undefined;
}

/** Before a run: refuses (400) when a tenant's MCP server URL names or resolves to an internal address. */
export async function refusePrivateMcp(servers: ReadonlyArray<{ name: string; url: string }>, resolve?: Parameters<typeof resolvedProblem>[1]): Promise<void> {
  for (const s of servers) {
    let problem: string | undefined;
    try {
      problem = await resolvedProblem(s.url, resolve, WHAT);
    } catch (err) {
      problem = `its host could not be resolved (${describeError(err)})`;
    }
    if (problem) throw badRequest(`MCP server "${s.name}": ${problem}; the operator may allow it with SVC_PRIVATE_MCP=allow`);
  }
}
