import * as v from 'valibot';
import { Base64, isInside, normalizeAbsolute } from '../validation.ts';
import { SnakeLimitsSchema } from '../../../contracts/sandbox-limits.ts';
import { cursorPageOf, deletedOf, Timestamp, type Describes } from '../wire.schema.ts';
import type { EnvironmentFile } from './environment-files.service.ts';
import type { EnvironmentInfo } from './environments.service.ts';
import type { EnvironmentTemplate } from './templates.service.ts';

/**
 * Request shapes of hosted environments (spec §3.2 EnvironmentParam, §3.4 TemplateCreateParams): one set of field
 * schemas serves templates and the `environment` of session creation. Paths are normalised; `env` and
 * `setup_commands` are secrets (stored sealed, never returned); inline `data` and `source` are never echoed.
 */
export const WORKSPACE = '/workspace';

const NonEmpty = v.pipe(v.string(), v.minLength(1, 'a non-empty string'));

export const AbsolutePath = v.pipe(
  v.string(),
  v.check((p) => normalizeAbsolute(p) !== undefined, 'an absolute path without ".." segments'),
  v.transform((p) => normalizeAbsolute(p)!),
);

export const WorkspacePath = v.pipe(
  AbsolutePath,
  v.check((p) => isInside(p, WORKSPACE), `an absolute path inside ${WORKSPACE}`),
);

const StringList = v.optional(v.nullable(v.array(v.string())));

export const FileParam = v.variant('type', [
  v.object({ type: v.literal('file_id'), file_id: NonEmpty, path: WorkspacePath }),
  v.object({ type: v.literal('inline'), data: Base64, path: WorkspacePath }),
]);

const Source = v.object({ type: v.literal('base64'), media_type: v.literal('application/zip'), data: Base64 });

export const PluginParam = v.object({ type: v.literal('inline'), name: NonEmpty, description: v.string(), source: Source });

export const SkillParam = v.variant('type', [
  v.object({
    type: v.literal('skill_reference'),
    skill_id: NonEmpty,
    version: v.optional(v.nullable(v.pipe(v.string(), v.regex(/^(?:[1-9][0-9]{0,8}|latest)$/, 'a positive integer or "latest"')))),
  }),
  v.object({ type: v.literal('inline'), name: NonEmpty, description: v.string(), source: Source }),
]);

export const NetworkParam = v.object({
  access: v.picklist(['enabled', 'disabled', 'restricted']),
  allowed_domains: StringList,
});

export const PackagesParam = v.object({ npm: StringList, python: StringList, system: StringList });

export const SetupCommandParam = v.object({ command: NonEmpty, cwd: v.optional(v.nullable(AbsolutePath)) });

const EnvMap = v.pipe(
  v.record(v.string(), v.string()),
  v.check((m) => Object.keys(m).every((k) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(k)), 'variable names of letters, digits and underscores'),
);

/** The hosted fields shared by templates and `{type: 'openai_hosted'}` environments; each may be null (= default). */
export const HostedFields = {
  capability_directories: v.optional(v.nullable(v.array(AbsolutePath))),
  env: v.optional(v.nullable(EnvMap)),
  files: v.optional(v.nullable(v.array(FileParam))),
  network: v.optional(v.nullable(NetworkParam)),
  packages: v.optional(v.nullable(PackagesParam)),
  plugins: v.optional(v.nullable(v.array(PluginParam))),
  setup_commands: v.optional(v.nullable(v.array(SetupCommandParam))),
  skills: v.optional(v.nullable(v.array(SkillParam))),
};

export const TemplateParams = v.object({
  name: v.optional(v.nullable(v.pipe(v.string(), v.trim(), v.maxLength(256, 'at most 256 characters')))),
  ...HostedFields,
});

/**
 * `config` of a hosted environment (an extension of the spec's EnvironmentParam): `limits`, what the session's commands,
 * stdio MCP servers and setup commands may consume, in the snake_case keys of contracts/sandbox-limits.ts, each within
 * the operator's and the tenant's ceilings (checked at session creation).
 */
export const EnvironmentConfig = v.strictObject({ limits: v.optional(v.nullable(SnakeLimitsSchema)) }, 'unknown field; allowed: limits');
export type EnvironmentConfig = v.InferOutput<typeof EnvironmentConfig>;

export const EnvironmentParam = v.variant('type', [
  v.object({ type: v.literal('none') }),
  v.object({ type: v.literal('openai_hosted'), environment_template_id: v.optional(v.nullable(v.string())), ...HostedFields, config: v.optional(v.nullable(EnvironmentConfig)) }),
  v.object({ type: v.literal('self_hosted'), workspace_directory: AbsolutePath, capability_directories: v.optional(v.nullable(v.array(AbsolutePath))) }),
]);

export type HostedInput = Partial<{ [K in keyof typeof HostedFields]: v.InferOutput<(typeof HostedFields)[K]> }>;
export type TemplateInput = v.InferOutput<typeof TemplateParams>;
export type EnvironmentInput = v.InferOutput<typeof EnvironmentParam>;

// ── responses (spec §2.4, §2.9): never `env`, `setup_commands` or file contents ─────────────────────────────────────

const NetworkOut = v.object({ access: v.picklist(['enabled', 'disabled', 'restricted']), allowed_domains: v.array(v.string()) });
const PackagesOut = v.object({ npm: v.array(v.string()), python: v.array(v.string()), system: v.array(v.string()) });
const PluginOut = v.object({ type: v.literal('inline'), name: v.string(), description: v.string() });
const SizeBytes = v.pipe(v.number(), v.integer());

export const HostedEnvironmentFile = v.variant('type', [
  v.object({ type: v.literal('file_id'), id: v.string(), file_id: v.string(), path: v.string(), size_bytes: SizeBytes }),
  v.object({ type: v.literal('inline'), id: v.string(), path: v.string(), size_bytes: SizeBytes }),
]);
export const HostedSkill = v.variant('type', [
  v.object({ type: v.literal('skill_reference'), skill_id: v.string(), name: v.string(), description: v.string(), version: v.string() }),
  v.object({ type: v.literal('inline'), name: v.string(), description: v.string() }),
]);
/** svc extension: the sandbox limits the environment was created with (snake_case keys). */
const ConfigOut = v.object({ limits: v.record(v.string(), v.number()) });

/** `AgentSession.environment`: none, or a hosted environment's public configuration. */
export const EnvironmentResource = v.variant('type', [
  v.object({ type: v.literal('none') }),
  v.object({
    type: v.literal('openai_hosted'),
    id: v.string(),
    capability_directories: v.array(v.string()),
    files: v.array(HostedEnvironmentFile),
    network: NetworkOut,
    packages: PackagesOut,
    plugins: v.array(PluginOut),
    skills: v.array(HostedSkill),
    config: v.optional(ConfigOut),
  }),
]);

export const EnvironmentInfoObject = v.object({
  id: v.string(),
  object: v.literal('agent.environment'),
  files: v.array(HostedEnvironmentFile),
  plugins: v.array(PluginOut),
  skills: v.array(HostedSkill),
  status: v.picklist(['pending', 'connected', 'disconnected', 'expired', 'failed']),
  type: v.picklist(['openai_hosted', 'self_hosted']),
  config: v.optional(ConfigOut),
});

export const EnvironmentFileObject = v.object({ environment_id: v.string(), object: v.literal('agent.environment.file'), path: v.string(), size_bytes: SizeBytes });

/** The token page of environment files: the next page is `page=<next>`. */
export const EnvironmentFilePage = v.object({ object: v.literal('list'), data: v.array(EnvironmentFileObject), has_more: v.boolean(), next: v.nullable(v.string()) });

export const EnvironmentFilesQuery = v.object({
  page: v.optional(v.pipe(v.string(), v.description('The `next` token of the previous page'))),
  limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100), v.description('Files per page, 1 to 100 (default 20)'))),
  order: v.optional(v.pipe(v.picklist(['asc', 'desc']), v.description('Path order, case-sensitive by component (default desc)'))),
  path: v.optional(v.pipe(v.string(), v.description('An absolute workspace directory: only the files below it'))),
});

export const EnvironmentTemplateObject = v.object({
  id: v.string(),
  object: v.literal('agent.environment.template'),
  name: v.nullable(v.string()),
  created_at: Timestamp,
  updated_at: Timestamp,
  capability_directories: v.array(v.string()),
  network: NetworkOut,
  packages: PackagesOut,
  plugins: v.array(PluginOut),
  files: v.array(
    v.variant('type', [
      v.object({ type: v.literal('file_id'), file_id: v.string(), path: v.string() }),
      v.object({ type: v.literal('inline'), path: v.string(), size_bytes: SizeBytes }),
    ]),
  ),
  skills: v.array(
    v.variant('type', [
      v.object({ type: v.literal('skill_reference'), skill_id: v.string(), version: v.nullable(v.string()) }),
      v.object({ type: v.literal('inline'), name: v.string(), description: v.string() }),
    ]),
  ),
});
export const EnvironmentTemplatePage = cursorPageOf(EnvironmentTemplateObject);
export const EnvironmentTemplateDeleted = deletedOf('agent.environment.template.deleted');

export type CheckedEnvironmentInfo = Describes<typeof EnvironmentInfoObject, EnvironmentInfo>;
export type CheckedEnvironmentFile = Describes<typeof EnvironmentFileObject, EnvironmentFile>;
export type CheckedEnvironmentTemplate = Describes<typeof EnvironmentTemplateObject, EnvironmentTemplate>;
