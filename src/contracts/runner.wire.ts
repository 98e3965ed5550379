import * as v from 'valibot';
import { CLIENT_ID_PATTERN } from '../shared/ids.ts';
import { ParkedResume } from './approvals.ts';
import { McpServerSpec, ModelOverride, ProfileMcpServerSpec, RUNTIMES, SkillPayload, type Runtime } from './worker.ts';
import { PROFILE_NETWORK } from './toolkit.ts';
import { PERMISSIONS } from './permissions.ts';
import { MemoryMounts } from './memory.ts';
import { SandboxLimitsOverrideSchema, type LimitsReport } from './sandbox-limits.ts';
import type { SessionStatus } from './runner.ts';

/**
 * Runner wire schemas and types (seed 000, "Runner wire API"): the runner validates request bodies with these, and the
 * conductor's runner client sends and reads the same shapes.
 */
export const WORKER_SUBSTRATES = ['hosted_a', 'hosted_b', 'container', 'process'] as const;

/** A profile as the conductor broadcasts it to runners. Unknown fields pass through untouched. */
export const ProfileSpec = v.looseObject({
  id: v.optional(v.string()),
  name: v.pipe(v.string(), v.minLength(1, 'a non-empty string')),
  runtime: v.picklist(RUNTIMES),
  model: v.optional(v.string()),
  systemPrompt: v.optional(v.string()),
  skills: v.optional(v.array(v.string())),
  tools: v.optional(v.array(v.string())),
  mcpServers: v.optional(v.array(ProfileMcpServerSpec)),
  fs: v.optional(v.record(v.string(), v.unknown())),
  network: v.optional(v.picklist(PROFILE_NETWORK, `one of ${PROFILE_NETWORK.join(', ')}`)),
  workerMode: v.optional(v.picklist(['static', 'sandbox'])),
  workerSubstrate: v.optional(v.picklist(WORKER_SUBSTRATES)),
  workerImage: v.optional(v.string()),
  /** Memory stores the profile mounts: the session's toolkit then has the memory tools (contracts/memory.ts). */
  memoryStores: v.optional(MemoryMounts),
  /**
   * What the session's commands, stdio MCP servers and sandbox worker may consume (contracts/sandbox-limits.ts). The
   * conductor sends the profile's overrides already held to the tenant's ceilings; the runner fills the rest from its
   * operator defaults and holds every key to its own ceilings.
   */
  limits: v.optional(SandboxLimitsOverrideSchema),
  /** Tool permission policy, validated by the conductor (contracts/permissions.ts); enforced by the runner's toolkit. */
  permissions: v.optional(v.record(v.string(), v.picklist(PERMISSIONS))),
  /** Seconds an `ask` approval waits before it counts as denied (absent: the conductor's SVC_APPROVAL_TIMEOUT_S). */
  approvalTimeoutSeconds: v.optional(v.number()),
});
export type ProfileSpec = v.InferOutput<typeof ProfileSpec>;

export const PoolSpec = v.looseObject({
  id: v.optional(v.string()),
  name: v.pipe(v.string(), v.minLength(1, 'a non-empty string')),
  description: v.optional(v.string()),
  members: v.optional(v.array(v.object({ profile: v.string(), role: v.optional(v.string()) }))),
  fs: v.optional(v.object({ read: v.optional(v.array(v.string())), write: v.optional(v.array(v.string())) })),
});
export type PoolSpec = v.InferOutput<typeof PoolSpec>;

export const PutProfileRequest = v.object({ profile: ProfileSpec });
export const PutPoolRequest = v.object({ pool: PoolSpec });
const clientId = v.pipe(v.string(), v.regex(CLIENT_ID_PATTERN, '1-128 letters, digits, underscore or hyphen'));

/**
 * Body of `POST /runner/sessions`. `profile` (an extension of the seed's body): the profile as the caller holds it,
 * stored on the runner as `POST /runner/profiles` would before the session is created (one call instead of two).
 * `sandboxOf` (an extension too): a live session of the tenant on this runner whose sandbox (`/work`) the new session
 * shares instead of a scratch folder of its own (a /v1 subagent works in its parent's files).
 */
export const CreateSessionRequest = v.object({ profileName: v.pipe(v.string(), v.minLength(1, 'a non-empty string')), profile: v.optional(ProfileSpec), sandboxOf: v.optional(clientId) });

/** Body of `POST /runner/sessions/{id}/hydrate`; `stateB64` is checked strictly (alphabet and padding) by the runner. */
export const HydrateRequest = v.object({
  profileName: v.pipe(v.string(), v.minLength(1, 'a non-empty string')),
  runtimeSessionId: v.optional(v.string(), ''),
  stateContentType: v.optional(v.string(), ''),
  stateB64: v.optional(v.string()),
  /** As for CreateSessionRequest: the hydrated session shares that live session's sandbox. */
  sandboxOf: v.optional(clientId),
});
export type HydrateRequest = v.InferInput<typeof HydrateRequest>;

/** SubTask (seed 000, "SubTask"): the unit of work the conductor hands a runner. */
export const SubTask = v.object({
  id: v.optional(clientId),
  parentId: v.optional(v.string()),
  profile: v.pipe(v.string(), v.minLength(1, 'a non-empty string')),
  sessionId: v.optional(clientId),
  title: v.optional(v.string()),
  prompt: v.optional(v.string()),
  files: v.optional(v.array(v.string())),
});
export type SubTask = v.InferInput<typeof SubTask>;
/**
 * Body of `POST /runner/run`. `skills` are the profile's skills, already resolved from the conductor's catalog; the
 * runner forwards them to the worker unchanged. The run token travels in RUN_TOKEN_HEADER, never in the body.
 */
export const RunRequest = v.object({
  subTask: SubTask,
  skills: v.optional(v.array(SkillPayload)),
  /** Per-run model with its address and key (a tenant's own key, a /v1 model); never stored by the runner. */
  model: v.optional(ModelOverride),
  /** Per-run MCP servers, added to the profile's (the /v1 agents API: the session's function tools and MCP tools). */
  mcpServers: v.optional(v.array(McpServerSpec)),
  /** Environment variables for the session's commands (a /v1 environment's `env`); never stored by the runner. */
  env: v.optional(v.record(v.string(), v.string())),
  /** A call of this run that waits for approval parks the run instead of holding (conductor runs/parking.ts). */
  parkable: v.optional(v.boolean()),
  /** Resumes a parked run: the pending call runs (approved) or fails (denied), then the model goes on. */
  resume: v.optional(ParkedResume),
});

/** Body of `POST /runner/sessions/{id}/toolkit/invoke`. `input` is checked by the tool itself (a tool failure, not a 400). */
export const ToolkitInvokeRequest = v.object({
  toolName: v.pipe(v.string(), v.minLength(1, 'a non-empty string')),
  input: v.optional(v.unknown(), {}),
  /** NDJSON instead of JSON: `{output}` lines while the tool runs (a command's output), then one `{result}` line. */
  stream: v.optional(v.boolean()),
  /**
   * The platform's own call (a /v1 environment's seeding, setup commands, artifact and capability reads), not a
   * model's: the profile's permission policy, which governs what the model may do, does not apply to it.
   */
  platform: v.optional(v.boolean()),
});

/** One platform tool as `GET /runner/toolkit/specs` lists it; `inputSchema` is JSON Schema. */
export interface ToolSpec {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** Where the tool's effects land: `session` (its own files and processes), `pool` (runs of pool peers), `tenant` (messages out). */
  scope: 'session' | 'pool' | 'tenant';
  /** The permission the tool exercises, e.g. `fs.read`, `fs.write`, `process.exec`, `runs.delegate`, `notify.send`. */
  capability: string;
}

/** `result` of a toolkit invocation: a failed tool answers 200 with ok false and `{error}` in value. */
export interface ToolResult {
  ok: boolean;
  value: unknown;
}

/** VFS lease (seed 000, "VFS lease"): `allowedMounts` empty means the VirtualFS session is unrestricted. */
export interface VfsLease {
  sessionId: string;
  allowedMounts: string[];
  allocatedAt: string;
}

/**
 * The runner's command sandbox, proven at start by running a no-op inside it. `mode` `off` is the operator's explicit
 * opt-out (SVC_SANDBOX=off): commands run unsandboxed. With `bwrap` and `available` false, the conductor refuses
 * profiles that may run commands (`@exec`), and the runner refuses to run them, with `detail` saying why and how to fix it.
 */
export interface RunnerSandbox {
  mode: 'bwrap' | 'off';
  available: boolean;
  detail: string;
}

export interface RunnerInfo {
  id: string;
  hash: string;
  version: string;
  startedAt: string;
  capabilities: string[];
  toolkitNames: string[];
  substrates: string[];
  defaultSubstrate: string;
  substratesKnown: boolean;
  mcpBaseUrl: string;
  /** Absent on runners older than the sandbox. */
  sandbox?: RunnerSandbox;
  /** Which sandbox limits this runner enforces and how (`memoryMiB: "cgroup-v1"`…); absent on runners older than them. */
  limits?: LimitsReport;
}

export type RuntimeSlotMode = 'sidecar' | 'stub' | 'unknown';
export type SidecarSlotState = 'stub' | 'live' | 'cold' | 'degraded' | 'unreachable';

export interface RunnerRuntime {
  id: Runtime;
  name: string;
  mode: RuntimeSlotMode;
  url: string;
  activeSessions: number;
}

export interface ObservedInstance {
  instanceId: string;
  firstSeenAt: string;
  lastSeenAt: string;
  runsServed: number;
  consecutiveFailures: number;
  lastProbedAt: string;
  inflight: number;
  uptimeSeconds: number;
  pid: number;
  nodeVersion: string;
  memory: { rssBytes: number; heapUsedBytes: number; heapTotalBytes: number; externalBytes: number };
  cpu: { userMicros: number; systemMicros: number };
}

export interface SidecarSlot {
  runtime: Runtime;
  mode: RuntimeSlotMode;
  endpoint: string;
  state: SidecarSlotState;
  activeSessions: number;
  observedInstances: ObservedInstance[];
}

export interface RunnerTopology {
  /**
   * The seed names these after a Go runtime; here: allocBytes = V8 heap used, sysBytes = RSS, heapInuseBytes = V8 heap
   * total, numGoroutine = active libuv resources (handles, requests), numCPU = available parallelism. `cpu` is extra.
   */
  process: {
    allocBytes: number;
    sysBytes: number;
    heapInuseBytes: number;
    numGoroutine: number;
    numCPU: number;
    uptimeSeconds: number;
    cpu: { userMicros: number; systemMicros: number };
  };
  sessionsByRuntime: Record<string, number>;
  sidecars: SidecarSlot[];
}

/** Session record as `GET /runner/sessions/{id}` returns it (string status). */
export interface RunnerSession {
  id: string;
  profile: string;
  runtime: Runtime;
  status: SessionStatus;
  createdAt: string;
  lastUsedAt: string;
  lastPrompt: string;
  lastRunStatus: string;
  runCount: number;
  runtimeSessionId: string;
}

/** Session record in `GET /runner/sessions` (the runner wire form: integer status, SESSION_STATUS_CODES). */
export type RunnerSessionListItem = Omit<RunnerSession, 'status'> & { status: number };
