import type { ColumnType, Generated } from 'kysely';
import type { ApprovalStatus } from '../../contracts/approvals.ts';
import type { NullableTimestamp, Timestamp } from './columns.ts';

/** Approvals of tool calls under an `ask` permission (0028). */
export interface ApprovalsTable {
  id: string;
  tenant_id: string;
  run_id: string;
  session_id: string;
  tool_call_id: string | null;
  tool_name: string;
  input: ColumnType<unknown, string | null, string | null>;
  status: Generated<ApprovalStatus>;
  message: ColumnType<string | null, string | null | undefined, string | null>;
  decided_input: ColumnType<unknown, string | null | undefined, string | null>;
  decided_by: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Timestamp;
  expires_at: Timestamp;
  decided_at: NullableTimestamp;
}

export interface ApprovalTables {
  approvals: ApprovalsTable;
}
