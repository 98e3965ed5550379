import { permissionFor } from '../../../contracts/permissions.ts';
import type { Approvals } from '../approvals/index.ts';
import type { SessionRecord } from '../sessions/sessions.store.ts';

/**
 * The permission gate: what a profile's `permissions` (contracts/permissions.ts) say about one call, and for `ask`, a
 * person's decision (approvals/). Every call of svc's toolkit and every call to an MCP server the runner fronts for a
 * session (mcp/) passes here, whichever runtime made it. `identity` is what the policy names (`fs_write`,
 * `mcp:github/create_issue`); `name` what the run's events call the tool (`fs_write`, `github__create_issue`).
 */
export type GateOutcome = { allowed: true; input: unknown } | { allowed: false; error: string };

export async function gate(
  approvals: Approvals | undefined,
  session: SessionRecord,
  call: { identity: string; name: string; input: unknown },
  signal: AbortSignal,
): Promise<GateOutcome> {
  const { permission, selector } = permissionFor(session.profile.permissions, call.identity);
  if (permission === 'deny') return { allowed: false, error: `tool ${call.name} denied by the permission policy of profile ${session.profile.name} (${selector}: deny)` };
  if (permission === 'allow') return { allowed: true, input: call.input };
  const asked = approvals ? await approvals.ask(session, call.name, call.input, signal) : ({ approved: false, reason: 'it needs approval, and this runner cannot ask' } as const);
  if (!asked.approved) return { allowed: false, error: `tool ${call.name} was not run: ${asked.reason}` };
  return { allowed: true, input: asked.input };
}
