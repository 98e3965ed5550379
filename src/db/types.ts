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

export interface DB {
  tenants: TenantsTable;
  api_keys: ApiKeysTable;
  svc_migrations: MigrationsTable;
}
