/** Tool calls held for a person's approval on this runner: see approvals.service.ts. */
export { createApprovals, resumed, type Approvals, type HeldOutcome, type Outcome } from './approvals.service.ts';
export { approvalRoutes } from './approvals.routes.ts';
