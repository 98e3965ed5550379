import type { ColumnType, Generated } from 'kysely';
import type { Timestamp, NullableTimestamp, Json } from './columns.ts';

/** Tables of publishing (0013): published agents, their agent keys and gateway conversations. */
export interface PublishedAgentsTable {
  id: string;
  tenant_id: string;
  profile_name: string;
  slug: string;
  visibility: Generated<'private' | 'org' | 'public'>;
  auth_mode: Generated<'api_key' | 'jwt'>;
  allowed_origins: Json<string[]>;
  rate_limit_rpm: Generated<number>;
  sync_max_duration_seconds: Generated<number>;
  conversation_ttl_days: ColumnType<number | null, number | null | undefined, number | null>;
  expose_tool_events: Generated<boolean>;
  /** 0030: who approves a call to an `ask` tool made on the chat endpoint. */
  approvals: Generated<'deny' | 'owner'>;
  enabled: Generated<boolean>;
  monthly_cost_cap_usd_cents: ColumnType<string | number | null, number | null | undefined, number | null>;
  jwks_url: ColumnType<string | null, string | null | undefined, string | null>;
  jwt_issuer: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: NullableTimestamp;
}

export interface AgentKeysTable {
  id: string;
  tenant_id: string;
  published_id: string;
  label: string;
  key_hash: string;
  key_prefix: string;
  created_by: string | null;
  created_at: Timestamp;
  expires_at: NullableTimestamp;
  revoked_at: NullableTimestamp;
}

export interface ChatConversationsTable {
  id: string;
  tenant_id: string;
  published_id: string;
  owner: string;
  session_id: string;
  created_at: Timestamp;
  last_active_at: Timestamp;
}

export interface ChatTurnsTable {
  run_id: string;
  tenant_id: string;
  published_id: string;
  conversation_id: string;
  created_at: Timestamp;
}

export interface PublishingTables {
  chat_turns: ChatTurnsTable;
  published_agents: PublishedAgentsTable;
  agent_keys: AgentKeysTable;
  chat_conversations: ChatConversationsTable;
}
