import type { MemoryEntry, MemoryEntrySummary } from '../../../contracts/memory.ts';
import type { memoryStores } from '../../conductor/index.ts';

type StoreView = memoryStores.StoreView;
type VersionView = memoryStores.VersionView;

/**
 * The /v1 shapes of memory stores. Seed 001 has none, so they follow Claude Managed Agents' memory stores
 * (`memory_store`, `memory`, `memory_version`: RFC 3339 times, `content_sha256`, `content_size_bytes`), in the list
 * envelope of the rest of /v1; svc's own fields (`scope`, `limits`, `user_id`, `version`) are extensions.
 */
export function storeObject(s: StoreView) {
  return {
    id: s.id,
    type: 'memory_store' as const,
    name: s.name,
    description: s.description,
    metadata: s.metadata,
    scope: s.scope,
    limits: { max_entries: s.limits.maxEntries, max_entry_bytes: s.limits.maxEntryBytes, max_total_bytes: s.limits.maxTotalBytes },
    usage: { entries: s.usage.entries, bytes: s.usage.bytes },
    archived_at: null,
    created_at: s.createdAt,
    updated_at: s.updatedAt,
  };
}

/** `content` only with `view=full` (null otherwise, as Claude's `basic` view answers). */
export function memoryObject(storeId: string, e: MemoryEntry | MemoryEntrySummary, userId: string | undefined, full: boolean) {
  return {
    id: e.id,
    type: 'memory' as const,
    memory_store_id: storeId,
    path: e.path,
    content: full && 'content' in e ? e.content : null,
    content_sha256: e.sha256,
    content_size_bytes: e.bytes,
    memory_version_id: e.versionId,
    version: e.version,
    user_id: userId ?? null,
    created_at: e.createdAt,
    updated_at: e.updatedAt,
  };
}

/** Who wrote a version: an agent's run, an API key, a signed-in person. */
function actorObject(actor: string) {
  const [kind, ...rest] = actor.split(':');
  const id = rest.join(':');
  if (kind === 'run') return { type: 'run_actor' as const, run_id: id };
  if (kind === 'key') return { type: 'api_actor' as const, api_key_id: id };
  if (kind === 'user') return { type: 'user_actor' as const, user_id: id };
  return { type: 'system_actor' as const, name: actor };
}

export function versionObject(storeId: string, v: VersionView, userId: string | undefined, full: boolean) {
  return {
    id: v.id,
    type: 'memory_version' as const,
    memory_id: v.entryId,
    memory_store_id: storeId,
    operation: v.operation,
    path: v.path,
    content: full && v.content !== undefined ? v.content : null,
    content_sha256: v.sha256,
    content_size_bytes: v.bytes,
    version: v.version,
    restored_from: v.restoredFrom,
    user_id: userId ?? null,
    created_by: actorObject(v.actor),
    redacted_at: null,
    created_at: v.createdAt,
  };
}
