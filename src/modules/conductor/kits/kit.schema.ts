import * as v from 'valibot';
import { readOnlyFields } from '../../../shared/strict-body.ts';
import type { KitKind } from '../../../db/types.ts';
import type { StoredResource } from '../skills/skill.schema.ts';
import type { AutomationSnap, PoolSnap } from './sanitize.ts';
import type { Agrees, Same } from '../schema-check.ts';
import type { CopyPlan } from './copy.service.ts';
import type { summary } from './kits.service.ts';

/** Bodies of the `/api/templates` routes (seed 000 "Skills catalog, templates and kits") and the kit manifest. */
export const SLUG_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;
const Name = v.pipe(v.string(), v.minLength(1, 'a name'), v.maxLength(128, 'at most 128 characters'));

/** Exactly one of pool, agent, automation; `schedules` (automation names to carry) only with a pool or an agent. */
const Source = v.pipe(
  v.object({ pool: v.optional(Name), agent: v.optional(Name), automation: v.optional(Name) }),
  v.check((s) => [s.pool, s.agent, s.automation].filter((x) => x !== undefined).length === 1, 'name exactly one of pool, agent, automation'),
);
const Schedules = v.pipe(v.array(v.pipe(v.string(), v.minLength(1))), v.maxLength(100, 'at most 100 schedules'));

const withSchedules = <T extends { source: { automation?: string }; schedules?: string[] }>(body: T) => body.schedules === undefined || body.source.automation === undefined;
const SCHEDULES_RULE = 'only with a pool or an agent (an automation kit carries its automation)';

export const CreateKit = v.pipe(
  v.object({
    slug: v.pipe(v.string(), v.regex(SLUG_PATTERN, 'lowercase letters, digits and hyphens, at most 63, starting with a letter or digit')),
    label: v.pipe(v.string(), v.minLength(1, 'a label'), v.maxLength(200, 'at most 200 characters')),
    description: v.optional(v.pipe(v.string(), v.maxLength(4000, 'at most 4000 characters')), ''),
    source: Source,
    schedules: v.optional(Schedules),
  }),
  v.forward(v.check(withSchedules, SCHEDULES_RULE), ['schedules']),
);
export type CreateKit = v.InferOutput<typeof CreateKit>;

/** `POST /api/templates/preview`: the source as in create (or its keys at the top level), nothing saved. */
export const PreviewKit = v.pipe(
  v.object({ source: Source, schedules: v.optional(Schedules) }),
  v.forward(v.check(withSchedules, SCHEDULES_RULE), ['schedules']),
);
export type PreviewKit = v.InferOutput<typeof PreviewKit>;

/** Only the label and description change; the rest of what a GET shows is read-only (a new snapshot is a republish). */
export const PatchKit = v.object({
  ...readOnlyFields('id', 'slug', 'kind', 'source', 'version', 'builtIn', 'authorHandle', 'authorName', 'counts', 'createdAt', 'updatedAt', 'manifest', 'stats'),
  label: v.optional(v.pipe(v.string(), v.minLength(1, 'a label'), v.maxLength(200, 'at most 200 characters'))),
  description: v.optional(v.pipe(v.string(), v.maxLength(4000, 'at most 4000 characters'))),
});

export const CopyKit = v.object({ targetName: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, 'a name of 1-128 letters, digits, dot, underscore or hyphen'))) });

export const KitEvent = v.object({ kind: v.picklist(['view', 'click'], 'one of view, click') });

export interface SkillSnap {
  name: string;
  description: string;
  body: string;
  license: string | null;
  compatibility: string | null;
  allowedTools: string[];
  metadata: Record<string, unknown>;
  requiresSandbox: boolean;
  totalBytes: number;
  resources: StoredResource[];
  /** The packaged files (base64); left out of every read, used by copy. */
  files: Array<{ path: string; content: string; executable: boolean }>;
}

/** A kit's sanitized snapshot. `root` names the pool, agent or automation the kit was made from. */
export interface KitManifest {
  kind: KitKind;
  root: string;
  profiles: Array<Record<string, unknown> & { name: string }>;
  pool: PoolSnap | null;
  skills: SkillSnap[];
  automations: AutomationSnap[];
  /** Dotted paths of the values stripped at snapshot time (to be filled in after a copy). */
  stripped: string[];
}

/** What the kit routes answer (kits.service.ts `summary`, `toWire`; copy.service.ts). */
const Instant = v.string();
const Kind = v.picklist(['pool', 'agent', 'automation']);

/** The snapshot: profiles, pool, skills and automations as their own routes show them (only the fields every one has are named). */
const ManifestView = v.object({
  kind: Kind,
  root: v.string(),
  profiles: v.array(v.objectWithRest({ name: v.string() }, v.unknown())),
  pool: v.nullable(v.objectWithRest({ name: v.string(), members: v.array(v.object({ profile: v.string(), role: v.string() })) }, v.unknown())),
  skills: v.array(v.objectWithRest({ name: v.string(), description: v.string(), body: v.string() }, v.unknown())),
  automations: v.array(v.objectWithRest({ name: v.string(), profile: v.string(), cron: v.string() }, v.unknown())),
  /** Dotted paths of the values left out of the snapshot (secrets): to be filled in after a copy. */
  stripped: v.array(v.string()),
});

export const KitSummary = v.object({
  id: v.string(),
  slug: v.string(),
  label: v.string(),
  description: v.string(),
  kind: Kind,
  /** `{<kind>: <name>}`: the pool, agent or automation the kit was made from. */
  source: v.record(v.string(), v.string()),
  version: v.number(),
  builtIn: v.boolean(),
  authorHandle: v.string(),
  authorName: v.string(),
  counts: v.object({ profiles: v.number(), skills: v.number(), automations: v.number() }),
  createdAt: Instant,
  updatedAt: Instant,
});

/** `scope=copied` adds what was copied, when, and whether the kit has since been deleted. */
export const KitListItem = v.object({
  ...KitSummary.entries,
  deleted: v.optional(v.boolean()),
  copiedAt: v.optional(Instant),
  copiedVersion: v.optional(v.number()),
  targetName: v.optional(v.string()),
});

export const KitView = v.object({ ...KitSummary.entries, manifest: ManifestView });

/** A signed-in read of the reader's own kit adds its share page's view and click counts. */
export const KitReadView = v.object({ ...KitView.entries, stats: v.optional(v.object({ views: v.number(), clicks: v.number() })) });

export const KitPreview = v.object({ kind: Kind, source: v.record(v.string(), v.string()), manifest: ManifestView });

const PlanItem = v.object({
  kind: v.picklist(['skill', 'profile', 'pool', 'automation']),
  name: v.string(),
  status: v.picklist(['new', 'changed', 'unchanged']),
  targetName: v.string(),
});
const KitRefView = v.object({ id: v.string(), slug: v.string(), version: v.number() });

export const CopyPlanView = v.object({ kit: KitRefView, targetName: v.string(), rootExists: v.boolean(), assets: v.array(PlanItem) });

/** `copied: false` with `reason: already_exists` when the root's target name is taken (nothing written). */
export const CopyResultView = v.object({
  copied: v.boolean(),
  reason: v.optional(v.literal('already_exists')),
  targetName: v.string(),
  created: v.optional(v.array(v.object({ kind: PlanItem.entries.kind, name: v.string() }))),
  assets: v.array(PlanItem),
  kit: KitRefView,
});

export const KitListQuery = v.object({ scope: v.optional(v.picklist(['saved', 'copied'])) });
export const KitSlugQuery = v.object({
  org: v.optional(v.pipe(v.string(), v.description('The author tenant, when several tenants share kits under this slug'))),
  id: v.optional(v.pipe(v.string(), v.description('An exact kit id under this slug'))),
});
export const CopyPlanQuery = v.object({ ...KitSlugQuery.entries, targetName: v.optional(v.pipe(v.string(), v.description('The name the root should get'))) });

/** The schemas above say what the code answers (schema-check.ts). */
export type KitAnswersChecked = [
  Agrees<Same<v.InferOutput<typeof KitSummary>, ReturnType<typeof summary>>>,
  Agrees<Same<Omit<v.InferOutput<typeof CopyPlanView>, 'kit'>, CopyPlan>>,
];
