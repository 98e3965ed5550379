import * as v from 'valibot';
import { cursorPageOf, cursorQuery, type Describes } from '../wire.schema.ts';
import type { memoryObject, storeObject, versionObject } from './memory.wire.ts';

/**
 * The answers of `/v1/memory_stores` (memory.wire.ts): Claude Managed Agents' shapes, told apart by `type`, with RFC
 * 3339 times; `content` is null unless the view is `full`.
 */
const Rfc3339 = v.pipe(v.string(), v.description('RFC 3339'));
const Count = v.pipe(v.number(), v.integer());

export const MemoryStoreObject = v.object({
  id: v.string(),
  type: v.literal('memory_store'),
  name: v.string(),
  description: v.string(),
  metadata: v.record(v.string(), v.string()),
  scope: v.picklist(['shared', 'per_user']),
  limits: v.object({ max_entries: Count, max_entry_bytes: Count, max_total_bytes: Count }),
  usage: v.object({ entries: Count, bytes: Count }),
  archived_at: v.null(),
  created_at: Rfc3339,
  updated_at: Rfc3339,
});

export const MemoryObject = v.object({
  id: v.string(),
  type: v.literal('memory'),
  memory_store_id: v.string(),
  path: v.string(),
  content: v.nullable(v.string()),
  content_sha256: v.string(),
  content_size_bytes: Count,
  memory_version_id: v.string(),
  version: Count,
  user_id: v.nullable(v.string()),
  created_at: Rfc3339,
  updated_at: Rfc3339,
});

const Actor = v.variant('type', [
  v.object({ type: v.literal('run_actor'), run_id: v.string() }),
  v.object({ type: v.literal('api_actor'), api_key_id: v.string() }),
  v.object({ type: v.literal('user_actor'), user_id: v.string() }),
  v.object({ type: v.literal('system_actor'), name: v.string() }),
]);

export const MemoryVersionObject = v.object({
  id: v.string(),
  type: v.literal('memory_version'),
  memory_id: v.string(),
  memory_store_id: v.string(),
  operation: v.picklist(['created', 'modified', 'renamed', 'deleted', 'restored']),
  path: v.string(),
  content: v.nullable(v.string()),
  content_sha256: v.nullable(v.string()),
  content_size_bytes: v.nullable(Count),
  version: Count,
  restored_from: v.nullable(v.string()),
  user_id: v.nullable(v.string()),
  created_by: Actor,
  redacted_at: v.null(),
  created_at: Rfc3339,
});

export const MemoryStorePage = cursorPageOf(MemoryStoreObject);
export const MemoryPage = cursorPageOf(MemoryObject);
export const MemoryVersionPage = cursorPageOf(MemoryVersionObject);
export const MemoryStoreDeleted = v.object({ id: v.string(), type: v.literal('memory_store_deleted') });
export const MemoryDeleted = v.object({ id: v.string(), type: v.literal('memory_deleted') });

const View = v.optional(v.pipe(v.picklist(['basic', 'full']), v.description('`full` includes each `content`')));
const UserIdQuery = v.optional(v.pipe(v.string(), v.description('The end user of a per_user store')));
export const StoreListQuery = cursorQuery({}, 'asc');
export const ViewQuery = v.object({ view: View });
export const UserViewQuery = v.object({ user_id: UserIdQuery, view: View });
export const MemoryListQuery = cursorQuery({ user_id: UserIdQuery, path_prefix: v.optional(v.pipe(v.string(), v.description('Only the memories under this path (default /)'))), view: View }, 'asc');
export const MemoryVersionListQuery = cursorQuery({ memory_id: v.optional(v.pipe(v.string(), v.description('Only the versions of this memory'))), user_id: UserIdQuery, view: View });
export const DeleteMemoryQuery = v.object({ expected_content_sha256: v.optional(v.pipe(v.string(), v.description('Delete only if the memory still has this content hash (else 409)'))) });

export type CheckedStore = Describes<typeof MemoryStoreObject, ReturnType<typeof storeObject>>;
export type CheckedMemory = Describes<typeof MemoryObject, ReturnType<typeof memoryObject>>;
export type CheckedVersion = Describes<typeof MemoryVersionObject, ReturnType<typeof versionObject>>;
