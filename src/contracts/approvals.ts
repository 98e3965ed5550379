import * as v from 'valibot';

/**
 * Approvals (issue 40): a call to a toolkit tool under an `ask` policy waits for a person. The runner asks the
 * conductor to record the pending approval (`POST /api/runs/self/approvals`, run token), shows `approval_required`,
 * and holds the call until the conductor delivers the decision (`POST /runner/sessions/{id}/approvals/{approvalId}`),
 * whether a person took it (`POST /api/runs/{id}/approvals/{approvalId}`) or it expired.
 *
 * Until waiting runs are parked (their worker's state exported and released), the call is held on the runner, the
 * worker's MCP request open: so an approval waits at most APPROVAL_HOLD_MAX_S, below the shortest limit a live run
 * holds (a /v1 turn's one-hour deadline), whatever its timeout says; `expiresAt` always tells the real end.
 */
export const APPROVAL_HOLD_MAX_S = 3300;
/** The default wait (SVC_APPROVAL_TIMEOUT_S), cut to APPROVAL_HOLD_MAX_S while calls are held. */
export const DEFAULT_APPROVAL_TIMEOUT_S = 86_400;

export const APPROVAL_STATUSES = ['pending', 'approved', 'denied', 'expired', 'cancelled'] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

/** Body of `POST /api/runs/self/approvals` (the runner, with the run token). */
export const ApprovalRequest = v.object({
  toolCallId: v.optional(v.string()),
  toolName: v.pipe(v.string(), v.minLength(1, 'a non-empty string')),
  input: v.optional(v.unknown()),
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
