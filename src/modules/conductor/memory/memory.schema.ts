import * as v from 'valibot';
import { readOnlyFields } from '../../../shared/strict-body.ts';
import { MEMORY_STORE_NAME, MEMORY_STORE_NAME_RULE, memoryPathProblem } from '../../../contracts/memory.ts';

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
