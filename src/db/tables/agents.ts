import type { ColumnType, Generated } from 'kysely';
import type { Timestamp, NullableTimestamp, Json } from './columns.ts';

/** Tables of the /v1 agents API: agents, sessions, turns, items, events (0004), files, skills, vaults, environments, provider keys (0005), artifacts (0007). */
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
  /** What the sandbox holds once set up (`/home/.svc/sandbox-mark`); null until the first time. */
  sandbox_mark: ColumnType<string | null, string | null | undefined, string | null>;
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
  /** Whether this version of the file is in the session's sandbox. */
  delivered: ColumnType<boolean, boolean | undefined, boolean>;
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

export type AgentSessionStatus = 'idle' | 'in_progress' | 'requires_action' | 'failed';

export type AgentTurnStatus = 'queued' | 'in_progress' | 'waiting' | 'completed' | 'failed' | 'cancelled';

export interface AgentsTable {
  id: string;
  tenant_id: string;
  config: Json<Record<string, unknown>>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** Input events handed from the replica that received them to the one driving the session's turn (0021). */
export interface AgentSessionInboxTable {
  id: string;
  tenant_id: string;
  session_id: string;
  events: Json | null;
  call: Json | null;
  result: Json | null;
  claimed_by: string | null;
  answered: Generated<boolean>;
  error: Json | null;
  created_at: Generated<Date>;
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
  /** The conductor replica driving the turn (sql/0010). */
  owner_id: string | null;
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
  /** Set on a subagent's items (sql/0020); the session's own conversation has NULL. */
  subagent_id: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Timestamp;
}

/** Subagents spawned by a session's model (sql/0020). */
export interface AgentSubagentsTable {
  id: string;
  tenant_id: string;
  session_id: string;
  parent_agent_id: string;
  name: string | null;
  instructions: Json<unknown[] | null>;
  status: 'active' | 'closed';
  runner_session_id: string | null;
  opened_at: Timestamp;
  closed_at: NullableTimestamp;
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

export interface AgentsTables {
  agent_files: AgentFilesTable;
  agent_skills: AgentSkillsTable;
  agent_skill_versions: AgentSkillVersionsTable;
  vaults: VaultsTable;
  vault_credentials: VaultCredentialsTable;
  environment_templates: EnvironmentTemplatesTable;
  agent_environments: AgentEnvironmentsTable;
  agent_environment_files: AgentEnvironmentFilesTable;
  provider_keys: ProviderKeysTable;
  agents: AgentsTable;
  agent_sessions: AgentSessionsTable;
  agent_turns: AgentTurnsTable;
  agent_items: AgentItemsTable;
  agent_subagents: AgentSubagentsTable;
  agent_session_events: AgentSessionEventsTable;
  agent_idempotency_keys: AgentIdempotencyKeysTable;
  agent_session_artifacts: AgentSessionArtifactsTable;
  agent_session_inbox: AgentSessionInboxTable;
}
