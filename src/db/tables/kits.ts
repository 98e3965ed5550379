import type { ColumnType, Generated } from 'kysely';
import type { Json, NullableTimestamp, Timestamp } from './columns.ts';

/** Skill packages and kits (0016): skill files, staged imports, platform-skill tombstones, kits, copies, events. */
export interface SkillFilesTable {
  tenant_id: string;
  skill_name: string;
  path: string;
  content: Uint8Array;
  executable: Generated<boolean>;
}

export interface SkillImportsTable {
  id: string;
  tenant_id: string;
  package: Json<Record<string, unknown>>;
  created_at: Timestamp;
  expires_at: ColumnType<Date, Date | string, Date | string>;
}

export interface SkillImportFilesTable {
  import_id: string;
  tenant_id: string;
  path: string;
  content: Uint8Array;
  executable: Generated<boolean>;
}

export interface SkillTombstonesTable {
  tenant_id: string;
  name: string;
  deleted_at: Timestamp;
}

export type KitKind = 'pool' | 'agent' | 'automation';

export interface KitsTable {
  id: string;
  tenant_id: string;
  slug: string;
  label: string;
  description: Generated<string>;
  kind: KitKind;
  source_name: string;
  version: Generated<number>;
  manifest: Json<Record<string, unknown>>;
  built_in: Generated<boolean>;
  author_handle: string;
  author_name: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: NullableTimestamp;
}

export interface KitCopiesTable {
  tenant_id: string;
  kit_id: string;
  target_name: string;
  version: number;
  created: Json<unknown[]>;
  copied_at: Timestamp;
}

export interface KitEventsTable {
  id: Generated<string>;
  kit_id: string;
  kind: 'view' | 'click';
  signed_in: boolean;
  created_at: Timestamp;
}

export interface KitTables {
  skill_files: SkillFilesTable;
  skill_imports: SkillImportsTable;
  skill_import_files: SkillImportFilesTable;
  skill_tombstones: SkillTombstonesTable;
  kits: KitsTable;
  kit_copies: KitCopiesTable;
  kit_events: KitEventsTable;
}
