import type { ColumnType, Generated } from 'kysely';
import type { Json, NullableTimestamp, Timestamp } from './columns.ts';

/** Workflows (0015): definitions, schedules, runs, their nodes and the plan events. */
export type WorkflowOnError = 'pause' | 'fail' | 'continue';
export type WorkflowScheduleStatus = 'active' | 'paused';

export interface WorkflowDefinitionsTable {
  id: string;
  tenant_id: string;
  name: string;
  nodes: Json<unknown[]>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface WorkflowSchedulesTable {
  id: string;
  tenant_id: string;
  definition_id: string;
  cron: string;
  timezone: Generated<string>;
  status: ColumnType<WorkflowScheduleStatus, WorkflowScheduleStatus | undefined, WorkflowScheduleStatus>;
  next_run_at: NullableTimestamp;
  last_fired_at: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface WorkflowRunsTable {
  id: string;
  tenant_id: string;
  name: Generated<string>;
  definition_id: string | null;
  schedule_id: string | null;
  scheduled_for: NullableTimestamp;
  input: Json<unknown> | null;
  status: Generated<number>;
  seq: ColumnType<string | number, number | undefined, number>;
  created_at: Timestamp;
  started_at: NullableTimestamp;
  finished_at: NullableTimestamp;
  updated_at: Timestamp;
}

export interface WorkflowNodesTable {
  tenant_id: string;
  workflow_run_id: string;
  id: string;
  position: number;
  profile: string;
  prompt: Generated<string>;
  depends_on: Json<string[]>;
  on_error: ColumnType<WorkflowOnError, WorkflowOnError | undefined, WorkflowOnError>;
  status: Generated<number>;
  run_id: string | null;
  output: string | null;
  error: string | null;
  started_at: NullableTimestamp;
  finished_at: NullableTimestamp;
}

export interface WorkflowEventsTable {
  tenant_id: string;
  workflow_run_id: string;
  seq: ColumnType<string | number, number, number>;
  payload: Json<unknown>;
  created_at: Timestamp;
}

export interface WorkflowTables {
  workflow_definitions: WorkflowDefinitionsTable;
  workflow_schedules: WorkflowSchedulesTable;
  workflow_runs: WorkflowRunsTable;
  workflow_nodes: WorkflowNodesTable;
  workflow_events: WorkflowEventsTable;
}
