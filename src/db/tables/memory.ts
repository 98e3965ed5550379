import type { ColumnType, Generated } from 'kysely';
import type { Json, Timestamp } from './columns.ts';

/** Memory stores, their entries and the entries' versions (0025). */
export type MemoryScope = 'shared' | 'per_user';
export type MemoryOperation = 'created' | 'modified' | 'renamed' | 'deleted' | 'restored';

export interface MemoryStoresTable {
  id: string;
  tenant_id: string;
  name: string;
  description: Generated<string>;
  scope: MemoryScope;
  max_entries: number;
  max_entry_bytes: number;
  /** bigint: postgres.js reads it as a string. */
  max_total_bytes: ColumnType<string | number, number, number>;
  metadata: Json<Record<string, string>>;
  automation_id: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface MemoryEntriesTable {
  id: string;
  tenant_id: string;
  store_id: string;
  partition: Generated<string>;
  path: string;
  content: string;
  bytes: number;
  sha256: string;
  version: number;
  version_id: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  search: ColumnType<string, never, never>;
}

export interface MemoryVersionsTable {
  id: string;
  tenant_id: string;
  store_id: string;
  entry_id: string;
  partition: string;
  path: string;
  version: number;
  operation: MemoryOperation;
  content: string | null;
  bytes: number | null;
  sha256: string | null;
  actor: string;
  restored_from: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Timestamp;
}

export interface MemoryTables {
  memory_stores: MemoryStoresTable;
  memory_entries: MemoryEntriesTable;
  memory_versions: MemoryVersionsTable;
}
