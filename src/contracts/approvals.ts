import * as v from 'valibot';

/**
 * Approvals (issue 40): a call to a toolkit tool under an `ask` policy waits for a person. The runner asks the
 * conductor to record the pending approval (`POST /api/runs/self/approvals`, run token), shows `approval_required`,
 * and holds the call until the conductor delivers the decision (`POST /runner/sessions/{id}/approvals/{approvalId}`),
 * whether a person took it (`POST /api/runs/{id}/approvals/{approvalId}`) or it expired.
 *
 * A run of the `general` runtime started by a stored profile is PARKED while it waits (conductor runs/parking.ts):
 * its worker ends the turn with the call pending in its conversation, the conversation is saved as the session's state
 * bundle, and worker, event upload and tokens are released; the decision resumes it. Such an approval waits its whole
 * timeout (SVC_APPROVAL_TIMEOUT_S, or the profile's approvalTimeoutSeconds).
 *
 * Any other call (runtime_a, runtime_b, and runs whose settings are not stored, such as /v1 turns) is HELD on the
 * runner, the worker's MCP request open: such an approval waits at most APPROVAL_HOLD_MAX_S, below the shortest
 * limit a live run holds (a /v1 turn's one-hour deadline), whatever its timeout says; `expiresAt` always tells the
 * real end.
 */
export const APPROVAL_HOLD_MAX_S = 3300;
/** The default wait (SVC_APPROVAL_TIMEOUT_S); a held call's is cut to APPROVAL_HOLD_MAX_S. */
export const DEFAULT_APPROVAL_TIMEOUT_S = 86_400;

export const APPROVAL_STATUSES = ['pending', 'approved', 'denied', 'expired', 'cancelled'] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

/** Body of `POST /api/runs/self/approvals` (the runner, with the run token). */
export const ApprovalRequest = v.object({
  toolCallId: v.optional(v.string()),
  toolName: v.pipe(v.string(), v.minLength(1, 'a non-empty string')),
  input: v.optional(v.unknown()),
  /** The run parks while it waits (not held): the approval may wait its whole timeout. */
  park: v.optional(v.boolean()),
});
export type ApprovalRequest = v.InferInput<typeof ApprovalRequest>;

/** Answer of `POST /api/runs/self/approvals`. */
export interface ApprovalTicket {
  approvalId: string;
  expiresAt: string;
}

/** Body of `POST /api/runs/{id}/approvals/{approvalId}` (a person). */
export const ApprovalDecisionBody = v.object({
  decision: v.picklist(['approve', 'deny'], 'approve or deny'),
  message: v.optional(v.pipe(v.string(), v.maxLength(4000, 'at most 4000 characters'))),
  /** The tool's input as the person edited it (approve only); validated by the tool like the model's own. */
  input: v.optional(v.record(v.string(), v.unknown())),
});
export type ApprovalDecisionBody = v.InferOutput<typeof ApprovalDecisionBody>;

/** What the conductor delivers to the runner holding the call. `reason` for a denial: `denied` or `expired`. */
export const HeldDecision = v.object({
  decision: v.picklist(['approve', 'deny']),
  reason: v.optional(v.string()),
  message: v.optional(v.string()),
  input: v.optional(v.record(v.string(), v.unknown())),
});
export type HeldDecision = v.InferOutput<typeof HeldDecision>;

/** An approval as `/api` answers it. */
export interface Approval {
  id: string;
  runId: string;
  sessionId: string;
  toolCallId: string | null;
  toolName: string;
  input: unknown;
  status: ApprovalStatus;
  message: string | null;
  decidedBy: string | null;
  createdAt: string;
  expiresAt: string;
  decidedAt: string | null;
}

/**
 * The key of a toolkit result's structured content that says its call was parked (its value: the approval id). The
 * `general` runtime ends its turn after a step holding such a result; the runner never shows that result.
 */
export const PARKED_MARK = 'svcParkedApproval';

export function parkedApprovalOf(output: unknown): string | undefined {
  const structured = output && typeof output === 'object' ? (output as { structuredContent?: unknown }).structuredContent : undefined;
  const id = structured && typeof structured === 'object' ? (structured as Record<string, unknown>)[PARKED_MARK] : undefined;
  return typeof id === 'string' ? id : undefined;
}

/** What a conductor sends a runner to resume a parked run: the pending call and its decision. */
export const ParkedResume = v.object({
  approvalId: v.pipe(v.string(), v.minLength(1)),
  toolCallId: v.optional(v.string()),
  toolName: v.pipe(v.string(), v.minLength(1)),
  /** The input the model gave the call. */
  input: v.optional(v.unknown()),
  decision: HeldDecision,
});
export type ParkedResume = v.InferOutput<typeof ParkedResume>;
