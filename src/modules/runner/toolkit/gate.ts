import { permissionFor } from '../../../contracts/permissions.ts';
import type { Approvals } from '../approvals/index.ts';
import type { SessionRecord } from '../sessions/sessions.store.ts';

/**
 * The permission gate: what a profile's `permissions` (contracts/permissions.ts) say about one call, and for `ask`, a
 * person's decision (approvals/). Every call of svc's toolkit and every call to an MCP server the runner fronts for a
 * session (mcp/) passes here, whichever runtime made it. `identity` is what the policy names (`fs_write`,
 * `mcp:github/create_issue`); `name` what the run's events call the tool (`fs_write`, `github__create_issue`).
 *
 * `park`: the call may park its run instead of being held (only a toolkit call: the runner can run it itself when the
 * run resumes; approvals/ and conductor runs/parking.ts); `approved`: a person already approved this call (a parked
 * run resumed), so it is not asked again, though a `deny` still refuses it.
 */
export type GateOutcome = { allowed: true; input: unknown } | { allowed: false; error: string; parked?: string };

export async function gate(
  approvals: Approvals | undefined,
  session: SessionRecord,
  call: { identity: string; name: string; input: unknown },
  signal: AbortSignal,
  opts: { park?: boolean; approved?: boolean } = {},
): Promise<GateOutcome> {
  const { permission, selector } = permissionFor(session.profile.permissions, call.identity);
  if (permission === 'deny') return { allowed: false, error: `tool ${call.name} denied by the permission policy of profile ${session.profile.name} (${selector}: deny)` };
  if (permission === 'allow' || opts.approved) return { allowed: true, input: call.input };
  if (!approvals) return { allowed: false, error: `tool ${call.name} was not run: it needs approval, and this runner cannot ask` };
  const asked = await approvals.ask(session, call.name, call.input, signal, { park: opts.park === true });
  // the run parks (approvals/): the model's turn ends on this answer, which the run never shows
  if ('parked' in asked) return { allowed: false, parked: asked.parked, error: `tool ${call.name} waits for approval ${asked.parked}: the run is parked until a person decides` };
  if (!asked.approved) return { allowed: false, error: `tool ${call.name} was not run: ${asked.reason}` };
  return { allowed: true, input: asked.input };
}
