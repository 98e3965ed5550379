import * as v from 'valibot';
import { ProfileMcpServerSpec, RUNTIMES } from '../../../contracts/worker.ts';
import { WORKER_SUBSTRATES } from '../../../contracts/runner.wire.ts';
import { PROFILE_NETWORK } from '../../../contracts/toolkit.ts';
import { MemoryMounts } from '../../../contracts/memory.ts';
import { SandboxLimitsOverrideSchema } from '../../../contracts/sandbox-limits.ts';
import { JsonObject } from '../../../shared/http.ts';
import { readOnlyFields } from '../../../shared/strict-body.ts';
import { MULTITASK } from '../runs/multitask-strategies.ts';
import { formatModelId, MODEL_PROVIDER_IDS, parseModelId } from '../../../contracts/model-providers.ts';

/** The profile body of POST and PUT /api/profiles. `pinned` and `workerPlacement` are read-only: a GET's answer can be PUT back. */
export const GENERAL_PROVIDERS = MODEL_PROVIDER_IDS;
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

const Name = v.pipe(v.string(), v.regex(NAME_PATTERN, 'a name of 1-128 letters, digits, dot, underscore or hyphen'));
const Strings = v.array(v.pipe(v.string(), v.minLength(1, 'non-empty strings')));

export const ProfileBody = v.pipe(
  v.object({
    ...readOnlyFields('pinned', 'workerPlacement'),
    id: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(128))),
    name: Name,
    runtime: v.picklist(RUNTIMES, `one of ${RUNTIMES.join(', ')}`),
    model: v.optional(v.pipe(v.string(), v.minLength(1, 'a non-empty string'))),
    systemPrompt: v.optional(v.string()),
    skills: v.optional(Strings),
    tools: v.optional(Strings),
    mcpServers: v.optional(v.array(ProfileMcpServerSpec)),
    fs: v.optional(JsonObject),
    network: v.optional(v.picklist(PROFILE_NETWORK, `one of ${PROFILE_NETWORK.join(', ')}`)),
    workerMode: v.optional(v.picklist(['static', 'sandbox'], 'one of static, sandbox')),
    workerSubstrate: v.optional(v.picklist(WORKER_SUBSTRATES, `one of ${WORKER_SUBSTRATES.join(', ')}`)),
    workerImage: v.optional(v.string()),
    memoryStores: v.optional(MemoryMounts),
    /** What its sessions' commands, MCP servers and sandbox worker may consume; each key within the ceilings (profiles.service.ts). */
    limits: v.optional(SandboxLimitsOverrideSchema),
    /** What a run posted to a busy session of this profile does when the request does not say (runs/multitask.ts). */
    multitask: v.optional(v.picklist(MULTITASK, `multitask: expected one of ${MULTITASK.join(', ')}`)),
    /** Tool permission policy: selector → allow | ask | deny (contracts/permissions.ts; checked whole by the service). */
    permissions: v.optional(v.record(v.string(), v.unknown())),
    /** How long an `ask` approval waits before it counts as denied (`expired`); absent: SVC_APPROVAL_TIMEOUT_S. */
    approvalTimeoutSeconds: v.optional(v.pipe(v.number(), v.integer('an integer'), v.minValue(1, 'at least 1'), v.maxValue(2_592_000, 'at most 2592000 (30 days)'))),
  }),
  v.forward(
    v.check((p) => modelProblem(p.runtime, p.model) === undefined, (issue) => modelProblem((issue.input as { runtime: string }).runtime, (issue.input as { model?: string }).model) ?? ''),
    ['model'],
  ),
  // `provider/model` is accepted; `provider:model` is the one form stored and printed.
  v.transform((p) => {
    const parsed = p.runtime === 'general' && p.model !== undefined ? parseModelId(p.model) : undefined;
    return parsed && !('problem' in parsed) ? { ...p, model: formatModelId(parsed) } : p;
  }),
);
export type ProfileBody = v.InferOutput<typeof ProfileBody>;

/** The model form per runtime: `<provider>:<model_id>` (or `<provider>/<model_id>`) for general, a bare model id for the SDK runtimes. */
export function modelProblem(runtime: string, model: string | undefined): string | undefined {
  if (model === undefined) return undefined;
  if (runtime === 'general') {
    const parsed = parseModelId(model);
    return 'problem' in parsed ? `expected <provider>:<model_id> (or <provider>/<model_id>) for runtime general, provider one of ${GENERAL_PROVIDERS.join(', ')}` : undefined;
  }
  if (/[:\s/]/.test(model)) return `expected a bare model id for runtime ${runtime} (no provider prefix)`;
  return undefined;
}

/** One version in `GET /api/profiles/{name}/history`: each changed field with its value before and after. */
export const ProfileHistoryEntry = v.object({
  version: v.number(),
  changedAt: v.string(),
  changedBy: v.nullable(v.pipe(v.string(), v.description('Who changed it: `key:<id>` or a user'))),
  changes: v.record(v.string(), v.object({ from: v.unknown(), to: v.unknown() })),
});

const TokenTotals = v.object({ input: v.number(), output: v.number(), cacheRead: v.number(), cacheWrite: v.number(), total: v.number() });

/** `GET /api/profiles/{name}/usage`: the profile's runs in a window, their tokens and cost (micro-dollars), per model. */
export const ProfileUsage = v.object({
  profile: v.string(),
  window: v.string(),
  since: v.nullable(v.string()),
  until: v.string(),
  runs: v.number(),
  failedRuns: v.number(),
  tokens: TokenTotals,
  costMicroUsd: v.number(),
  costUsd: v.number(),
  byModel: v.array(v.object({ model: v.nullable(v.string()), runs: v.number(), failedRuns: v.number(), tokens: TokenTotals, costMicroUsd: v.number(), priced: v.boolean() })),
});

/** `POST /api/profiles/helper`. */
export const SeededHelper = v.object({ profileName: v.string(), created: v.boolean() });
