import * as v from 'valibot';

/**
 * Memory stores' shared vocabulary: store names, entry paths, a profile's mounts (`memoryStores: [{name, access}]`),
 * and the shapes the runner's memory tools read back from the conductor (`/api/memory-stores/…` called with the run
 * token; the conductor decides which stores and which end user's partition a run reaches). The conductor validates
 * profiles and requests with the same rules.
 */
export const MEMORY_STORE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
export const MEMORY_STORE_NAME_RULE = 'a name of 1-128 letters, digits, dot, underscore or hyphen';
/** Store names the platform keeps for itself: an automation's memory note lives in `automation-<automation id>`. */
export const RESERVED_STORE_PREFIX = 'automation-';

export const MEMORY_ACCESS = ['read', 'read_write'] as const;
export type MemoryAccess = (typeof MEMORY_ACCESS)[number];

/** One store a profile (or a /v1 agent) mounts. */
export const MemoryMount = v.strictObject({
  name: v.pipe(v.string(), v.regex(MEMORY_STORE_NAME, MEMORY_STORE_NAME_RULE)),
  access: v.optional(v.picklist(MEMORY_ACCESS, `one of ${MEMORY_ACCESS.join(', ')}`), 'read_write'),
});
export type MemoryMount = v.InferOutput<typeof MemoryMount>;

/** At most this many stores per profile: each is a directory the model is told about. */
export const MAX_MOUNTS = 8;
export const MemoryMounts = v.pipe(
  v.array(MemoryMount),
  v.maxLength(MAX_MOUNTS, `at most ${MAX_MOUNTS} memory stores`),
  v.check((list) => new Set(list.map((m) => m.name)).size === list.length, 'each memory store once'),
);

export const MAX_PATH_BYTES = 1024;

/**
 * Why `path` is no valid entry path (undefined when it is one): it starts with `/`, has non-empty segments other than
 * `.` and `..`, no control characters, is NFC-normalised and at most 1024 bytes. The same text names the same entry on
 * every surface, so lookalike spellings are refused rather than silently mapped.
 */
export function memoryPathProblem(path: string): string | undefined {
  if (!path.startsWith('/')) return 'must start with /';
  if (Buffer.byteLength(path, 'utf8') > MAX_PATH_BYTES) return `at most ${MAX_PATH_BYTES} bytes`;
  if (path.endsWith('/')) return 'names a file, so it must not end with /';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\ufeff]/.test(path)) return 'must not contain control or format characters';
  if (path.normalize('NFC') !== path) return 'must be NFC-normalised';
  for (const segment of path.slice(1).split('/')) {
    if (segment === '') return 'must not contain empty segments (//)';
    if (segment === '.' || segment === '..') return 'must not contain . or .. segments';
  }
  return undefined;
}

/** A stored entry as the tools and the API read it. */
export interface MemoryEntry {
  id: string;
  path: string;
  content: string;
  bytes: number;
  sha256: string;
  /** Counts the entry's writes from 1; a write may name the version it was based on (optimistic concurrency). */
  version: number;
  versionId: string;
  createdAt: string;
  updatedAt: string;
}

export type MemoryEntrySummary = Omit<MemoryEntry, 'content'>;

export interface MemoryLimits {
  maxEntries: number;
  maxEntryBytes: number;
  maxTotalBytes: number;
}

/** One store as a run sees it: usable, or why not (a per_user store in a run that has no end user). */
export interface MemoryMountView {
  name: string;
  description: string;
  scope: 'shared' | 'per_user';
  access: MemoryAccess;
  available: boolean;
  reason?: string;
  limits: MemoryLimits;
  /** What the run's partition holds now. */
  usage?: { entries: number; bytes: number };
}

export interface MemorySearchHit {
  store: string;
  path: string;
  version: number;
  bytes: number;
  rank: number;
  /** Matching words in context, marked with «…». */
  snippet: string;
  updatedAt: string;
}
