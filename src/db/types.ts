import type { ColumnType, Generated } from 'kysely';

/** Table types for Kysely. One interface per table; wire shapes live in the modules, not here. */
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
type Json<T = unknown> = ColumnType<T, string | T | undefined, string | T>;

export interface TenantsTable {
  id: string;
  name: string;
  metadata: Json<Record<string, unknown>>;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: NullableTimestamp;
}

export interface ApiKeysTable {
  id: string;
  tenant_id: string;
  name: string;
  role: 'owner' | 'admin' | 'member' | 'viewer';
  key_hash: string;
  key_prefix: string;
  created_by: string | null;
  created_at: Timestamp;
  expires_at: NullableTimestamp;
  revoked_at: NullableTimestamp;
}

export interface MigrationsTable {
  name: string;
  applied_at: Generated<Date>;
}


export interface ProfilesTable {
  tenant_id: string;
  name: string;
  id: string;
  spec: Json<Record<string, unknown>>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface PoolsTable {
  tenant_id: string;
  name: string;
  id: string;
  spec: Json<Record<string, unknown>>;
  created_at: Timestamp;
}

export interface SkillsTable {
  tenant_id: string;
  name: string;
  description: Generated<string>;
  body: string;
  resources: Json<unknown[]>;
  source: Generated<string>;
  created_at: Timestamp;
}

export interface SessionsTable {
  id: string;
  tenant_id: string;
  profile: string;
  runtime: string;
  status: ColumnType<'idle' | 'running' | 'errored' | 'shutdown', 'idle' | 'running' | 'errored' | 'shutdown' | undefined, 'idle' | 'running' | 'errored' | 'shutdown'>;
  runner_url: string;
  runtime_session_id: string | null;
  profile_snapshot: Json<Record<string, unknown>>;
  last_prompt: string | null;
  last_run_status: string | null;
  run_count: Generated<number>;
  created_at: Timestamp;
  last_used_at: Timestamp;
}

export interface SessionStatesTable {
  session_id: string;
  tenant_id: string;
  content_type: string;
  runtime_session_id: Generated<string>;
  bundle: Uint8Array;
  updated_at: Timestamp;
}

export type RunStatus = 'running' | 'ok' | 'error' | 'cancelled' | 'interrupted';

export interface RunsTable {
  id: string;
  tenant_id: string;
  session_id: string;
  profile: string;
  parent_id: string | null;
  sub_task: Json<Record<string, unknown>>;
  status: RunStatus;
  owner_id: string;
  started_at: Timestamp;
  finished_at: NullableTimestamp;
}

export interface RunEventsTable {
  run_id: string;
  seq: number;
  tenant_id: string;
  event: Json<Record<string, unknown>>;
}

export interface ConductorLeasesTable {
  owner_id: string;
  heartbeat_at: Timestamp;
  expires_at: Timestamp;
}

export interface DB {
  tenants: TenantsTable;
  api_keys: ApiKeysTable;
  svc_migrations: MigrationsTable;
  profiles: ProfilesTable;
  pools: PoolsTable;
  skills: SkillsTable;
  sessions: SessionsTable;
  session_states: SessionStatesTable;
  runs: RunsTable;
  run_events: RunEventsTable;
  conductor_leases: ConductorLeasesTable;
}

export interface NotificationsTable {
  id: string;
  tenant_id: string;
  channel: string;
  recipient: string | null;
  subject: string | null;
  message: string;
  status: ColumnType<'queued' | 'sent' | 'failed', 'queued' | 'sent' | 'failed' | undefined, 'queued' | 'sent' | 'failed'>;
  detail: Generated<string>;
  run_id: string | null;
  created_at: Timestamp;
}

/** Tables added by sql/0003_toolkit.sql (declaration merging keeps the DB interface above append-only). */
export interface DB {
  notifications: NotificationsTable;
}

export interface AgentFilesTable {
  id: string;
  tenant_id: string;
  filename: string;
  purpose: string;
  bytes: number;
  content: Uint8Array;
  created_at: Timestamp;
  expires_at: NullableTimestamp;
}

export interface AgentSkillsTable {
  id: string;
  tenant_id: string;
  default_version: number;
  latest_version: number;
  next_version: number;
  created_at: Timestamp;
}

export interface AgentSkillVersionsTable {
  id: string;
  tenant_id: string;
  skill_id: string;
  version: number;
  name: string;
  description: string;
  archive: Uint8Array;
  created_at: Timestamp;
}

export type ResourceStatus = 'active' | 'archived';

export interface VaultsTable {
  id: string;
  tenant_id: string;
  name: string | null;
  metadata: Json<Record<string, string>>;
  status: ColumnType<ResourceStatus, ResourceStatus | undefined, ResourceStatus>;
  created_at: Timestamp;
}

export interface VaultCredentialsTable {
  id: string;
  tenant_id: string;
  vault_id: string;
  name: string;
  auth: Json<Record<string, unknown>>;
  sealed: string;
  status: ColumnType<ResourceStatus, ResourceStatus | undefined, ResourceStatus>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface EnvironmentTemplatesTable {
  id: string;
  tenant_id: string;
  name: string | null;
  spec: Json<Record<string, unknown>>;
  sealed: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type EnvironmentStatus = 'pending' | 'connected' | 'disconnected' | 'expired' | 'failed';

export interface AgentEnvironmentsTable {
  id: string;
  tenant_id: string;
  session_id: string | null;
  type: 'openai_hosted' | 'self_hosted';
  status: EnvironmentStatus;
  workspace_directory: ColumnType<string, string | undefined, string>;
  spec: Json<Record<string, unknown>>;
  sealed: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface AgentEnvironmentFilesTable {
  environment_id: string;
  tenant_id: string;
  path: string;
  content: Uint8Array;
  size_bytes: number;
  file_id: string | null;
  updated_at: Timestamp;
}

export interface ProviderKeysTable {
  tenant_id: string;
  provider: string;
  sealed: string;
  key_hint: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** Tables added by sql/0005_agents_resources.sql (the /v1 agents API's files, skills, vaults, environments, provider keys). */
export interface DB {
  agent_files: AgentFilesTable;
  agent_skills: AgentSkillsTable;
  agent_skill_versions: AgentSkillVersionsTable;
  vaults: VaultsTable;
  vault_credentials: VaultCredentialsTable;
  environment_templates: EnvironmentTemplatesTable;
  agent_environments: AgentEnvironmentsTable;
  agent_environment_files: AgentEnvironmentFilesTable;
  provider_keys: ProviderKeysTable;
}

export type AgentSessionStatus = 'idle' | 'in_progress' | 'requires_action' | 'failed';
export type AgentTurnStatus = 'queued' | 'in_progress' | 'waiting' | 'completed' | 'failed' | 'cancelled';

export interface AgentsTable {
  id: string;
  tenant_id: string;
  config: Json<Record<string, unknown>>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface AgentSessionsTable {
  id: string;
  tenant_id: string;
  agent_id: string | null;
  profile_name: string;
  agent: Json<Record<string, unknown>>;
  secrets: Json<Record<string, unknown>>;
  environment: Json<Record<string, unknown>>;
  metadata: Json<Record<string, string>>;
  vault_ids: Json<string[]>;
  status: ColumnType<AgentSessionStatus, AgentSessionStatus | undefined, AgentSessionStatus>;
  error: string | null;
  usage: Json<Record<string, unknown> | null>;
  required_actions: Json<unknown[]>;
  active_turn_id: string | null;
  event_seq: Generated<number>;
  created_at: Timestamp;
  last_active_at: Timestamp;
}

export interface AgentTurnsTable {
  id: string;
  tenant_id: string;
  session_id: string;
  agent_id: string;
  subagent_id: string | null;
  status: AgentTurnStatus;
  error: Json<Record<string, unknown> | null>;
  usage: Json<Record<string, unknown> | null>;
  run_ids: Json<string[]>;
  created_at: Timestamp;
  started_at: NullableTimestamp;
  completed_at: NullableTimestamp;
}

export interface AgentItemsTable {
  id: string;
  tenant_id: string;
  session_id: string;
  turn_id: string;
  position: Generated<string>;
  item: Json<Record<string, unknown>>;
  created_at: Timestamp;
}

export interface AgentSessionEventsTable {
  session_id: string;
  seq: number;
  tenant_id: string;
  event: Json<Record<string, unknown>>;
  created_at: Timestamp;
}

export interface AgentIdempotencyKeysTable {
  session_id: string;
  key: string;
  tenant_id: string;
  body_hash: string;
  created_at: Timestamp;
}

/** Tables added by sql/0004_agents.sql (agents, agent sessions, turns, items, session events, idempotency keys). */
export interface DB {
  agents: AgentsTable;
  agent_sessions: AgentSessionsTable;
  agent_turns: AgentTurnsTable;
  agent_items: AgentItemsTable;
  agent_session_events: AgentSessionEventsTable;
  agent_idempotency_keys: AgentIdempotencyKeysTable;
}

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

/** Tables added by sql/0006_cli.sql (device login, credit ledger, spend cap, connected apps). */
export interface DB {
  device_codes: DeviceCodesTable;
  credit_ledger: CreditLedgerTable;
  spend_caps: SpendCapsTable;
  connected_apps: ConnectedAppsTable;
}

export interface AgentSessionArtifactsTable {
  id: string;
  tenant_id: string;
  session_id: string;
  environment_id: string;
  turn_id: string;
  path: string;
  size_bytes: number;
  sha256: string;
  content: Uint8Array | null;
  deleted_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  created_at: Timestamp;
}

/** Tables added by sql/0007_artifacts.sql (session artifacts of the /v1 agents API). */
export interface DB {
  agent_session_artifacts: AgentSessionArtifactsTable;
}
