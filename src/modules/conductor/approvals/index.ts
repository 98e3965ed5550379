/** Approvals of tool calls under an `ask` permission (issue 40): see approvals.service.ts. */
export { approvalsFeature } from './approvals.feature.ts';
export { ApprovalSchema } from './approvals.routes.ts';
