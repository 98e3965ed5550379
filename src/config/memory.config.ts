import { int } from './parse.ts';

/** Memory stores (conductor role): the operator's ceilings on every store's caps, and how long old versions stay. */
export interface MemoryConfig {
  /** SVC_MEMORY_MAX_ENTRIES: the most entries a store (a per_user store: each end user's part) may hold (default 1000). */
  maxEntries: number;
  /** SVC_MEMORY_MAX_ENTRY_BYTES: the largest entry, in UTF-8 bytes (default 102400, 100 KiB). */
  maxEntryBytes: number;
  /** SVC_MEMORY_MAX_TOTAL_BYTES: the most bytes a store (per end user) may hold (default 10 MiB). */
  maxTotalBytes: number;
  /** SVC_MEMORY_VERSION_DAYS: how long a replaced or deleted entry's earlier versions stay restorable (default 30). */
  versionDays: number;
}

export function memoryConfig(env: Record<string, string | undefined>): MemoryConfig {
  return {
    maxEntries: int('SVC_MEMORY_MAX_ENTRIES', env.SVC_MEMORY_MAX_ENTRIES, 1000, 1, 1_000_000),
    maxEntryBytes: int('SVC_MEMORY_MAX_ENTRY_BYTES', env.SVC_MEMORY_MAX_ENTRY_BYTES, 100 * 1024, 1, 16 * 1024 * 1024),
    maxTotalBytes: int('SVC_MEMORY_MAX_TOTAL_BYTES', env.SVC_MEMORY_MAX_TOTAL_BYTES, 10 * 1024 * 1024, 1, 1024 * 1024 * 1024),
    versionDays: int('SVC_MEMORY_VERSION_DAYS', env.SVC_MEMORY_VERSION_DAYS, 30, 1, 3650),
  };
}
