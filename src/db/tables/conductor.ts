import type { ColumnType, Generated } from 'kysely';
import type { Timestamp, NullableTimestamp, Json } from './columns.ts';

/** Tables of the control plane: identity (0001), profiles, pools, sessions, runs and their log (0002), notifications (0003). */
export interface TenantsTable {
  id: string;
  name: string;
  metadata: Json<Record<string, unknown>>;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: NullableTimestamp;
  /** Fingerprint of the platform skills last seeded into the tenant (0023); null until the first seeding. */
  platform_skills: ColumnType<string | null, string | null | undefined, string | null>;
  /** The tenant's sandbox ceilings (0025), a subset of the limit keys; `{}`: the operator's ceilings alone. */
  sandbox_limits: Json<Record<string, number>>;
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
  /** 0018: pinned profiles come first in lists; `version` counts the changes kept in profile_history. */
  pinned_at: NullableTimestamp;
  version: Generated<number>;
}

export interface PoolsTable {
  tenant_id: string;
  name: string;
  id: string;
  spec: Json<Record<string, unknown>>;
  created_at: Timestamp;
  pinned_at: NullableTimestamp;
  updated_at: Timestamp;
}

/** A profile's change history (0018): `changes` is `{field: {from, to}}`. */
export interface ProfileHistoryTable {
  tenant_id: string;
  profile_name: string;
  version: number;
  changed_at: Timestamp;
  changed_by: string | null;
  changes: Json<Record<string, { from: unknown; to: unknown }>>;
}

export interface SkillsTable {
  tenant_id: string;
  name: string;
  description: Generated<string>;
  body: string;
  resources: Json<unknown[]>;
  source: Generated<'user' | 'imported' | 'platform'>;
  created_at: Timestamp;
  license: ColumnType<string | null, string | null | undefined, string | null>;
  compatibility: ColumnType<string | null, string | null | undefined, string | null>;
  allowed_tools: Json<string[]>;
  metadata: Json<Record<string, unknown>>;
  requires_sandbox: Generated<boolean>;
  total_bytes: ColumnType<string | number, number | undefined, number>;
  updated_at: Timestamp;
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

/** `queued` (0029): posted to a busy session with `multitask: "enqueue"` or `"interrupt"`, waiting its turn. */
export type RunStatus = 'queued' | 'running' | 'ok' | 'error' | 'cancelled' | 'interrupted';

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
  /** Cost inputs (0011): the runtime, the model called and whose provider key paid; null on older runs. */
  runtime: ColumnType<string | null, string | null | undefined, string | null>;
  model: ColumnType<string | null, string | null | undefined, string | null>;
  key_source: ColumnType<'platform' | 'tenant' | null, 'platform' | 'tenant' | null | undefined, 'platform' | 'tenant' | null>;
  /** The feature that started the run (0019): `automation`, `workflow`; null for a direct API run. */
  origin: ColumnType<string | null, string | null | undefined, string | null>;
  /** The end user the run acts for (0025): per_user memory stores partition by it; null when none was named. */
  end_user_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** The memory stores the run's profile mounts (0025), `[{name, access}]`; null when none. */
  memory_stores: ColumnType<Array<{ name: string; access: 'read' | 'read_write' }> | null, string | null | undefined, string | null>;
  /** How a run posted to a busy session waits (0029): `enqueue`, `interrupt`; null for a run that started at once. */
  multitask: ColumnType<string | null, string | null | undefined, string | null>;
  /** Why a run was stopped where its status does not say (0029): `interrupted` (by a run posted with `interrupt`). */
  end_reason: ColumnType<string | null, string | null | undefined, string | null>;
  /** The approval a parked run waits on (0031): no conductor drives it until the decision resumes it; null otherwise. */
  parked_approval: ColumnType<string | null, string | null | undefined, string | null>;
  /** Events the log held when the run was last resumed from parking (0031); 0 for a run never parked. */
  resumed_from: ColumnType<number, number | undefined, number>;
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

export interface NotificationsTable {
  id: string;
  tenant_id: string;
  channel: string;
  recipient: string | null;
  subject: string | null;
  message: string;
  status: ColumnType<NotificationRowStatus, NotificationRowStatus | undefined, NotificationRowStatus>;
  detail: Generated<string>;
  run_id: string | null;
  created_at: Timestamp;
  /** 0018: what produced it (`notify`, `run.failed`, `automation.disabled`, …). */
  event: Generated<string>;
}

export type NotificationRowStatus = 'queued' | 'sent' | 'failed' | 'undeliverable';

/** A tenant's notification settings (0018): email and webhooks, one JSON document. */
export interface NotificationSettingsTable {
  tenant_id: string;
  settings: Json<Record<string, unknown>>;
  updated_by: string | null;
  updated_at: Timestamp;
}

/** One delivery of a notification to one channel (0018), worked by the job queue. */
export interface NotificationDeliveriesTable {
  id: string;
  tenant_id: string;
  notification_id: string;
  channel: 'email' | 'webhook';
  target: string;
  webhook_id: string | null;
  position: Generated<number>;
  status: ColumnType<'queued' | 'sent' | 'failed', 'queued' | 'sent' | 'failed' | undefined, 'queued' | 'sent' | 'failed'>;
  attempts: Generated<number>;
  last_error: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  delivered_at: NullableTimestamp;
}

/** A tenant's webhook endpoint (0027): where events go, signed with its own secret (sealed at rest). */
export interface WebhookEndpointsTable {
  id: string;
  tenant_id: string;
  url: string;
  description: Generated<string>;
  events: string[];
  enabled: Generated<boolean>;
  disabled_reason: string | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: NullableTimestamp;
  failing_since: NullableTimestamp;
  position: Generated<number>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** The webhook outbox (0027): an event some endpoint subscribes to, written in the transaction of what happened. */
export interface WebhookEventsTable {
  id: string;
  tenant_id: string;
  type: string;
  dedup_key: string | null;
  payload: Json<Record<string, unknown>>;
  notification_id: string | null;
  created_at: Timestamp;
}

export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed';

/** One event to one endpoint (0027): its attempts, worked by the job queue. */
export interface WebhookDeliveriesTable {
  id: string;
  tenant_id: string;
  event_id: string;
  endpoint_id: string;
  url: string;
  status: ColumnType<WebhookDeliveryStatus, WebhookDeliveryStatus | undefined, WebhookDeliveryStatus>;
  attempts: Generated<number>;
  last_status_code: number | null;
  last_latency_ms: number | null;
  last_error: string | null;
  next_attempt_at: NullableTimestamp;
  delivered_at: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface ConductorTables {
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
  notifications: NotificationsTable;
  notification_settings: NotificationSettingsTable;
  notification_deliveries: NotificationDeliveriesTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_events: WebhookEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  profile_history: ProfileHistoryTable;
  rate_limits: RateLimitsTable;
}

/** The shared rate limiter's windows (0009), one per (scope, key); not a tenant table: keys are opaque. */
export interface RateLimitsTable {
  scope: string;
  key: string;
  hits: number;
  resets_at: Timestamp;
}
