import type { ColumnType, Generated } from 'kysely';
import type { NullableTimestamp, Timestamp } from './columns.ts';

/** Automations and their firings (0013). */
export type AutomationStatus = 'active' | 'stopped' | 'disabled';
export type FiringOutcome = 'ok' | 'failed' | 'skipped';

export interface AutomationsTable {
  id: string;
  tenant_id: string;
  name: string;
  profile: string;
  prompt: Generated<string>;
  cron: string;
  timezone: Generated<string>;
  start_at: NullableTimestamp;
  end_at: NullableTimestamp;
  session_mode: ColumnType<'fresh' | 'persistent', 'fresh' | 'persistent' | undefined, 'fresh' | 'persistent'>;
  overlap: ColumnType<'skip' | 'queue', 'skip' | 'queue' | undefined, 'skip' | 'queue'>;
  max_consecutive_failures: Generated<number>;
  status: ColumnType<AutomationStatus, AutomationStatus | undefined, AutomationStatus>;
  next_run_at: NullableTimestamp;
  last_fired_at: NullableTimestamp;
  consecutive_failures: Generated<number>;
  session_id: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: NullableTimestamp;
}

export interface AutomationFiringsTable {
  id: string;
  tenant_id: string;
  automation_id: string;
  scheduled_for: ColumnType<Date, Date | string, Date | string>;
  fired_at: Timestamp;
  manual: Generated<boolean>;
  outcome: ColumnType<FiringOutcome | null, FiringOutcome | null | undefined, FiringOutcome | null>;
  run_id: string | null;
  session_id: string | null;
  error: string | null;
}

export interface AutomationTables {
  automations: AutomationsTable;
  automation_firings: AutomationFiringsTable;
}
