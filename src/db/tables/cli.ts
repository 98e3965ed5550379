import type { ColumnType, Generated } from 'kysely';
import type { Timestamp, NullableTimestamp } from './columns.ts';

/** Tables behind the CLI's server routes: device login, credit ledger, spend cap, connected apps (0006). */
export type DeviceCodeStatus = 'pending' | 'approved' | 'denied' | 'consumed';

export interface DeviceCodesTable {
  code_hash: string;
  user_code: string;
  label: string;
  status: ColumnType<DeviceCodeStatus, DeviceCodeStatus | undefined, DeviceCodeStatus>;
  tenant_id: string | null;
  role: 'owner' | 'admin' | 'member' | 'viewer' | null;
  approved_by: string | null;
  key_id: string | null;
  created_at: Timestamp;
  expires_at: Timestamp;
  decided_at: NullableTimestamp;
}

export interface CreditLedgerTable {
  id: string;
  tenant_id: string;
  kind: 'grant' | 'charge' | 'refund';
  /** bigint: drivers return it as a string; sums are cast to text and parsed by the billing service. */
  amount_micro_usd: ColumnType<string, number | string, never>;
  description: Generated<string>;
  run_id: string | null;
  created_by: string | null;
  created_at: Timestamp;
}

export interface SpendCapsTable {
  tenant_id: string;
  month_limit_cents: ColumnType<string | null, number | null | undefined, number | null>;
  billing_email: string | null;
  updated_by: string | null;
  updated_at: Timestamp;
}

export interface BillingCheckoutsTable {
  id: string;
  tenant_id: string;
  cents: ColumnType<string, number, never>;
  status: ColumnType<'open' | 'complete' | 'expired', 'open' | 'complete' | 'expired' | undefined, 'open' | 'complete' | 'expired'>;
  url: string | null;
  customer_id: string | null;
  created_by: string | null;
  created_at: Timestamp;
  credited_at: ColumnType<Date | string | null, never, Date | null>;
}

export interface BillingEventsTable {
  id: string;
  tenant_id: string;
  type: string;
  received_at: Timestamp;
}

export interface ConnectedAppsTable {
  id: string;
  tenant_id: string;
  provider: string;
  app_slug: string;
  scope: Generated<string>;
  status: ColumnType<'active' | 'pending' | 'error' | 'revoked', 'active' | 'pending' | 'error' | 'revoked' | undefined, 'active' | 'pending' | 'error' | 'revoked'>;
  mcp_server_name: string | null;
  created_at: Timestamp;
}

export interface CliTables {
  device_codes: DeviceCodesTable;
  credit_ledger: CreditLedgerTable;
  spend_caps: SpendCapsTable;
  billing_checkouts: BillingCheckoutsTable;
  billing_events: BillingEventsTable;
  connected_apps: ConnectedAppsTable;
}
