import * as v from 'valibot';
import { readOnlyFields } from '../../../shared/strict-body.ts';
import { MEMORY_STORE_NAME, MEMORY_STORE_NAME_RULE, memoryPathProblem } from '../../../contracts/memory.ts';
import type { Agrees, Same } from '../schema-check.ts';
import type { MemoryEntry, MemoryMountView, MemorySearchHit } from '../../../contracts/memory.ts';
import type { StoreView as Store } from './stores.service.ts';
import type { VersionView as Version } from './entries.service.ts';

/** Request bodies of `/api/memory-stores` (camelCase; the /v1 face reads its own and calls the same services). */
const Count = (what: string) => v.pipe(v.number(), v.integer(`${what}: an integer`), v.minValue(1, `${what}: at least 1`));

export const Limits = v.strictObject({
  maxEntries: v.optional(Count('maxEntries')),
  maxEntryBytes: v.optional(Count('maxEntryBytes')),
  maxTotalBytes: v.optional(Count('maxTotalBytes')),
});
export type Limits = v.InferOutput<typeof Limits>;

export const StoreName = v.pipe(v.string(), v.regex(MEMORY_STORE_NAME, MEMORY_STORE_NAME_RULE));
const Description = v.pipe(v.string(), v.maxLength(1024, 'at most 1024 characters'));
const Metadata = v.pipe(
  v.record(v.pipe(v.string(), v.minLength(1), v.maxLength(64, 'keys of at most 64 characters')), v.pipe(v.string(), v.maxLength(512, 'values of at most 512 characters'))),
  v.check((m) => Object.keys(m).length <= 16, 'at most 16 pairs'),
);

export const CreateStore = v.strictObject({
  name: StoreName,
  description: v.optional(Description, ''),
  scope: v.optional(v.picklist(['shared', 'per_user'], 'one of shared, per_user'), 'shared'),
  limits: v.optional(Limits),
  metadata: v.optional(Metadata),
});
export type CreateStore = v.InferOutput<typeof CreateStore>;

/**
 * Name and scope are fixed once created (profiles mount by name; partitions follow the scope): sent back unchanged
 * they are accepted, like the fields only a GET shows, so a GET's answer can be sent back.
 */
export const UpdateStore = v.strictObject({
  ...readOnlyFields('id', 'automationId', 'usage', 'createdAt', 'updatedAt'),
  /** Accepted when unchanged (stores.service checks them). */
  name: v.optional(v.string()),
  scope: v.optional(v.string()),
  description: v.optional(Description),
  limits: v.optional(Limits),
  metadata: v.optional(Metadata),
});
export type UpdateStore = v.InferOutput<typeof UpdateStore>;

export const EntryPath = v.pipe(
  v.string(),
  v.check((p) => memoryPathProblem(p) === undefined, (issue) => memoryPathProblem(String(issue.input)) ?? 'invalid path'),
);

const Version = v.pipe(v.number(), v.integer('an integer'), v.minValue(0, 'at least 0'));

export const WriteEntry = v.strictObject({
  ...readOnlyFields('id', 'path', 'bytes', 'sha256', 'version', 'versionId', 'createdAt', 'updatedAt'),
  content: v.string(),
  /** 0: create only (409 if the entry exists); n: only if the entry is at version n. */
  expectedVersion: v.optional(Version),
  userId: v.optional(v.string()),
});

export const RenameEntry = v.strictObject({
  from: EntryPath,
  to: EntryPath,
  expectedVersion: v.optional(Version),
  userId: v.optional(v.string()),
});

export const RestoreVersion = v.strictObject({
  expectedVersion: v.optional(Version),
  userId: v.optional(v.string()),
});

/** End-user ids: what the chat gateway, /v1 and /api name a run's end user with. */
export const USER_ID_MAX = 256;
export const UserId = v.pipe(v.string(), v.minLength(1, 'a non-empty string'), v.maxLength(USER_ID_MAX, `at most ${USER_ID_MAX} characters`));

/** What the memory routes answer (stores.service.ts `StoreView`, contracts/memory.ts, entries.service.ts `VersionView`). */
const Instant = v.string();
const LimitsView = v.object({ maxEntries: v.number(), maxEntryBytes: v.number(), maxTotalBytes: v.number() });
const Usage = v.object({ entries: v.number(), bytes: v.number() });

export const StoreView = v.object({
  id: v.string(),
  name: v.string(),
  description: v.string(),
  scope: v.picklist(['shared', 'per_user']),
  limits: LimitsView,
  metadata: v.record(v.string(), v.string()),
  /** Set when the store holds an automation's memory note. */
  automationId: v.nullable(v.string()),
  usage: Usage,
  createdAt: Instant,
  updatedAt: Instant,
});

export const EntrySummary = v.object({
  id: v.string(),
  path: v.string(),
  bytes: v.number(),
  sha256: v.string(),
  version: v.number(),
  versionId: v.string(),
  createdAt: Instant,
  updatedAt: Instant,
});
export const EntryView = v.object({ ...EntrySummary.entries, content: v.string() });

export const StoreUser = v.object({ userId: v.string(), entries: v.number(), bytes: v.number(), updatedAt: Instant });

export const VersionView = v.object({
  id: v.string(),
  entryId: v.string(),
  path: v.string(),
  version: v.number(),
  operation: v.picklist(['created', 'modified', 'renamed', 'deleted', 'restored']),
  bytes: v.nullable(v.number()),
  sha256: v.nullable(v.string()),
  actor: v.string(),
  restoredFrom: v.nullable(v.string()),
  createdAt: Instant,
  /** One version read by id carries its content (null for a delete). */
  content: v.optional(v.nullable(v.string())),
});

export const SearchHit = v.object({ store: v.string(), path: v.string(), version: v.number(), bytes: v.number(), rank: v.number(), snippet: v.string(), updatedAt: Instant });

export const MountView = v.object({
  name: v.string(),
  description: v.string(),
  scope: v.picklist(['shared', 'per_user']),
  access: v.picklist(['read', 'read_write']),
  available: v.boolean(),
  reason: v.optional(v.string()),
  limits: LimitsView,
  usage: v.optional(Usage),
});

const Param = (description: string) => v.optional(v.pipe(v.string(), v.description(description)));
const Paging = { limit: Param('How many items at most'), offset: Param('How many items to skip') };
const User = { userId: Param('A per_user store: the end user whose memory') };
export const UserQuery = v.object(User);
export const PagedQuery = v.object(Paging);
export const EntriesQuery = v.object({ ...Paging, ...User, prefix: Param('Only entries under this folder (default /)') });
export const DeleteEntryQuery = v.object({ ...User, expectedVersion: Param('Delete only if the entry is at this version') });
export const SearchQuery = v.object({ ...User, q: v.pipe(v.string(), v.description('Words to search for')), limit: Param('How many hits at most (10 by default, at most 50)') });
export const VersionsQuery = v.object({ ...Paging, ...User, path: Param('Only the versions of the entry at this path'), entryId: Param('Only the versions of this entry') });
export const MountSearchQuery = v.object({ q: v.pipe(v.string(), v.description('Words to search for')), store: Param('Only this mounted store'), limit: Param('How many hits at most (10 by default, at most 50)') });

/** The schemas above say what the code answers (schema-check.ts). */
export type MemoryAnswersChecked = [
  Agrees<Same<v.InferOutput<typeof StoreView>, Store>>,
  Agrees<Same<v.InferOutput<typeof EntryView>, MemoryEntry>>,
  Agrees<Same<v.InferOutput<typeof VersionView>, Version>>,
  Agrees<Same<v.InferOutput<typeof MountView>, MemoryMountView>>,
  Agrees<Same<v.InferOutput<typeof SearchHit>, MemorySearchHit>>,
];
