import * as v from 'valibot';
import { readOnlyFields } from '../../../shared/strict-body.ts';
import { NAME_PATTERN } from '../profiles/profile.schema.ts';

/** Pools (variant A) and pods (variant B): one resource, `{name, description, members: [{profile, role}], fs: {read, write}}`. */
const Patterns = v.array(v.pipe(v.string(), v.minLength(1, 'non-empty patterns')));
export const Member = v.object({
  profile: v.pipe(v.string(), v.minLength(1, 'a profile name')),
  role: v.optional(v.picklist(['lead', 'member'], 'one of lead, member'), 'member'),
});
const Members = v.optional(v.array(Member), []);
const Fs = v.object({ read: v.optional(Patterns), write: v.optional(Patterns) });

export const PoolBody = v.object({
  name: v.pipe(v.string(), v.regex(NAME_PATTERN, 'a name of 1-128 letters, digits, dot, underscore or hyphen')),
  description: v.optional(v.string()),
  members: Members,
  fs: v.optional(Fs),
});
export type PoolBody = v.InferOutput<typeof PoolBody>;

/** PATCH /api/pods/{name}: the supplied fields only (a pod is not renamed: `name`, like what else a GET shows, is read-only). */
export const PodPatch = v.strictObject({
  ...readOnlyFields('id', 'pinned'),
  /** Accepted when it is the pod's own name (routes check it). */
  name: v.optional(v.string()),
  description: v.optional(v.string()),
  members: v.optional(v.array(Member)),
  fs: v.optional(Fs),
});
export type PodPatch = v.InferOutput<typeof PodPatch>;

/** A pool (or pod) as the routes answer it: the stored fields and its id; pods also say whether they are pinned. */
export const PoolView = v.object({
  id: v.string(),
  name: v.string(),
  description: v.optional(v.string()),
  members: v.array(v.object({ profile: v.string(), role: v.picklist(['lead', 'member']) })),
  fs: v.optional(v.object({ read: v.optional(v.array(v.string())), write: v.optional(v.array(v.string())) })),
});
export const PodView = v.object({ ...PoolView.entries, pinned: v.boolean() });
