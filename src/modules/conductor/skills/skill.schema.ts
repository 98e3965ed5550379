import * as v from 'valibot';
import type { Agrees, Same } from '../schema-check.ts';

/**
 * The body of `POST /api/skills` (seed 000, "Skills catalog"): a skill is its SKILL.md `body` plus a manifest of the
 * resource files that ship with it. Resource paths are package-relative and may not climb out of the package.
 */
export const MAX_SKILL_BODY_CHARS = 256 * 1024;

/**
 * A skill's name is the folder its files are installed in (`/work/.skills/<name>/`): like other catalog names,
 * 1-128 letters, digits, `.`, `_`, `-`, starting with a letter or digit, but without `..`, so never a path or a traversal.
 */
export const SKILL_NAME_PATTERN = /^(?!.*\.\.)[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
export const SKILL_NAME_RULE = 'a name of 1-128 letters, digits, dot, underscore or hyphen, starting with a letter or digit, without ".."';

const ResourcePath = v.pipe(
  v.string(),
  v.minLength(1, 'a non-empty path'),
  v.maxLength(512, 'at most 512 characters'),
  v.check((p) => !p.startsWith('/') && !p.includes('\\') && !p.split('/').some((s) => s === '..' || s === '' || s === '.'), 'a package-relative path without "..", "." or empty segments'),
);

export const SkillResource = v.object({
  path: ResourcePath,
  contentType: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(200)), 'application/octet-stream'),
  sha256: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/, '64 lowercase hex characters')),
  size: v.pipe(v.number(), v.integer('an integer'), v.minValue(0, 'at least 0')),
});

export const SkillBody = v.object({
  name: v.pipe(v.string(), v.check((name) => SKILL_NAME_PATTERN.test(name), SKILL_NAME_RULE)),
  description: v.optional(v.pipe(v.string(), v.maxLength(1024, 'at most 1024 characters')), ''),
  body: v.pipe(v.string(), v.minLength(1, 'the SKILL.md text'), v.maxLength(MAX_SKILL_BODY_CHARS, `at most ${MAX_SKILL_BODY_CHARS} characters`)),
  resources: v.optional(
    v.pipe(
      v.array(SkillResource),
      v.maxLength(500, 'at most 500 resources'),
      v.check((rs) => new Set(rs.map((r) => r.path)).size === rs.length, 'resource paths must be unique'),
    ),
    [],
  ),
});
export type SkillBody = v.InferOutput<typeof SkillBody>;
export type SkillResource = v.InferOutput<typeof SkillResource>;

/** A stored resource: the manifest entry, with `executable` for packaged files (imported or platform skills). */
export type StoredResource = SkillResource & { executable?: boolean };

export const SKILL_SOURCES = ['user', 'imported', 'platform'] as const;
export type SkillSource = (typeof SKILL_SOURCES)[number];

/** A skill as `/api/skills` answers it; the list leaves out `body`. */
export interface Skill {
  name: string;
  description: string;
  body: string;
  resources: StoredResource[];
  source: SkillSource;
  license: string | null;
  compatibility: string | null;
  allowedTools: string[];
  metadata: Record<string, unknown>;
  requiresSandbox: boolean;
  totalBytes: number;
  createdAt: string;
}

/** What `/api/skills` answers: a skill (the list leaves out `body`), and the import's dry run. */
const SkillFields = {
  name: v.string(),
  description: v.string(),
  resources: v.array(v.object({ path: v.string(), contentType: v.string(), sha256: v.string(), size: v.number(), executable: v.optional(v.boolean()) })),
  source: v.picklist(SKILL_SOURCES),
  license: v.nullable(v.string()),
  compatibility: v.nullable(v.string()),
  allowedTools: v.array(v.string()),
  metadata: v.record(v.string(), v.unknown()),
  requiresSandbox: v.boolean(),
  totalBytes: v.number(),
  createdAt: v.string(),
};
export const SkillSummary = v.object(SkillFields);
export const SkillView = v.object({ ...SkillFields, body: v.string() });

const Issue = v.object({ code: v.string(), message: v.string(), path: v.optional(v.string()) });
export const ImportDryRun = v.object({
  /** The id to commit with (`POST /api/skills/import/{stagingId}`), valid until `expiresAt`. */
  stagingId: v.nullable(v.string()),
  expiresAt: v.nullable(v.string()),
  skill: v.object({
    name: v.string(),
    description: v.string(),
    license: v.nullable(v.string()),
    compatibility: v.nullable(v.string()),
    allowedTools: v.array(v.string()),
    metadata: v.record(v.string(), v.unknown()),
  }),
  body: v.string(),
  resources: v.array(v.object({ path: v.string(), contentType: v.string(), sha256: v.string(), executable: v.boolean(), bytes: v.number() })),
  requiresSandbox: v.boolean(),
  totalBytes: v.number(),
  validation: v.object({ ok: v.boolean(), errors: v.array(Issue), warnings: v.array(Issue) }),
});

/** The schemas above say what the code answers (schema-check.ts). */
export type SkillAnswersChecked = Agrees<Same<v.InferOutput<typeof SkillView>, Skill>>;
