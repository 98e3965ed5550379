import * as v from 'valibot';

/**
 * Agent-worker wire contract (seed 000, "Agent-worker API"): the runner posts a run body to `POST /run` and reads
 * NDJSON RunEvents; `GET/POST /state/{sessionId}` move opaque state bundles. Used by the worker server and the
 * runner's worker client.
 */
export const RUNTIMES = ['general', 'runtime_a', 'runtime_b'] as const;
export type Runtime = (typeof RUNTIMES)[number];
export const WORKER_MODES = ['general', 'runtime_a', 'runtime_b', 'all'] as const;
export type WorkerMode = (typeof WORKER_MODES)[number];

export const McpServerSpec = v.object({
  name: v.pipe(v.string(), v.minLength(1)),
  /** `http` (default) or `sse`: at `url`; `stdio`: `command` started by the runner in the session's sandbox for the run. */
  transport: v.optional(v.string(), 'http'),
  url: v.optional(v.pipe(v.string(), v.url())),
  command: v.optional(v.pipe(v.string(), v.minLength(1))),
  args: v.optional(v.array(v.string())),
  /** Working directory inside the sandbox (`/workspace…` is the session's `/work…`). */
  cwd: v.optional(v.string()),
  env: v.optional(v.record(v.string(), v.string())),
  headers: v.optional(v.record(v.string(), v.string())),
  /** What the server's tool names are prefixed with for the model; default `<name>__`, `''` keeps them bare. */
  toolPrefix: v.optional(v.string()),
  /** Only these tools of the server are offered to the model (the server's own names); absent = all. */
  allowedTools: v.optional(v.array(v.string())),
  /** How long one call to this server may wait for its answer (HTTP header and body timeouts); absent = fetch's own (5 min). */
  callTimeoutMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
  /**
   * Served by svc itself (the runner's stdio relay, the conductor's function-tool endpoint): connected without the
   * address policy. Every other server is a tenant's, connected under it (SVC_PRIVATE_ADDRESSES). Set only by svc:
   * a profile cannot (ProfileMcpServerSpec leaves it out).
   */
  platform: v.optional(v.boolean()),
  /**
   * svc's own endpoint that a run calls with the run's token (the conductor's function-tool endpoint), with `platform`:
   * the runner fronts it and sends the run's token of the moment with each request (renewed while the run lasts), so
   * the worker never holds one. Set only by svc: a profile cannot (ProfileMcpServerSpec leaves it out).
   */
  runTokenAuth: v.optional(v.boolean()),
});
export type McpServerSpec = v.InferOutput<typeof McpServerSpec>;

/** What a profile may name: a server at a URL (a stdio server exists only as one run's, started by the runner). */
export const ProfileMcpServerSpec = v.object({
  ...v.omit(McpServerSpec, ['url', 'command', 'args', 'cwd', 'env', 'platform', 'runTokenAuth']).entries,
  url: v.pipe(v.string(), v.url()),
});

/**
 * A resolved skill. Between conductor and runner a packaged skill's resources carry `content` (base64) and
 * `executable`; the runner writes them under `dir` in the session (`/work/.skills/<name>`) and forwards the skill to
 * the worker without `content`, with `dir` set.
 */
export const SkillPayload = v.object({
  name: v.string(),
  description: v.optional(v.string()),
  body: v.string(),
  resources: v.optional(
    v.array(
      v.object({
        path: v.string(),
        contentType: v.optional(v.string()),
        sha256: v.optional(v.string()),
        size: v.optional(v.number()),
        executable: v.optional(v.boolean()),
        content: v.optional(v.string()),
      }),
    ),
  ),
  dir: v.optional(v.string()),
});
export type SkillPayload = v.InferOutput<typeof SkillPayload>;

/**
 * A per-run model and its credentials: `model` replaces `profile.model` for this run (the /v1 agents API; absent: the
 * profile's own), and the provider's base URL and key apply to this run only (a tenant's own key, on every surface, or
 * the operator's aggregator). Never stored, never logged.
 */
export const ModelOverride = v.object({
  model: v.optional(v.pipe(v.string(), v.minLength(1))),
  baseUrl: v.optional(v.pipe(v.string(), v.url())),
  apiKey: v.optional(v.string()),
  /** Model settings of the /v1 agent; each reaches the providers that support it (the worker's providers.ts). */
  reasoningEffort: v.optional(v.picklist(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'])),
  reasoningSummary: v.optional(v.picklist(['concise', 'detailed', 'auto'])),
  serviceTier: v.optional(v.picklist(['auto', 'default', 'flex', 'priority', 'fast'])),
});
export type ModelOverride = v.InferOutput<typeof ModelOverride>;

export const WorkerRunRequest = v.object({
  sessionId: v.pipe(v.string(), v.minLength(1)),
  profile: v.object({
    name: v.pipe(v.string(), v.minLength(1)),
    runtime: v.picklist(RUNTIMES),
    systemPrompt: v.optional(v.string()),
    tools: v.optional(v.array(v.string())),
    model: v.optional(v.string()),
  }),
  subtask: v.object({
    title: v.string(),
    prompt: v.string(),
    files: v.optional(v.array(v.string())),
  }),
  sessionMcpUrl: v.string(),
  skills: v.optional(v.array(SkillPayload)),
  mcpServers: v.optional(v.array(McpServerSpec)),
  modelOverride: v.optional(ModelOverride),
  /**
   * Resumes the session's parked turn (the `general` runtime): the tool call that waited for approval `approvalId`
   * gets `output` (an MCP tool result) in place of its pending one, and the model goes on; no new prompt.
   */
  resume: v.optional(v.object({ approvalId: v.pipe(v.string(), v.minLength(1)), output: v.unknown() })),
});
export type WorkerRunRequest = v.InferOutput<typeof WorkerRunRequest>;

export interface WorkerHealth {
  ok: boolean;
  runtime: WorkerMode;
  instanceId: string;
  pid: number;
  startedAt: string;
  uptimeSeconds: number;
  inflight: number;
  nodeVersion: string;
  memory: { rssBytes: number; heapUsedBytes: number; heapTotalBytes: number; externalBytes: number };
  cpu: { userMicros: number; systemMicros: number };
}

export const WORKER_INSTANCE_HEADER = 'X-Svc-Worker-Instance';
export const WORKER_INFLIGHT_HEADER = 'X-Svc-Worker-Inflight';
export const RUNTIME_SESSION_HEADER = 'X-Runtime-Session-Id';

export function stateContentType(runtime: Runtime): string {
  return runtime === 'general' ? 'application/json' : 'application/gzip';
}

/**
 * A query parameter of `sessionMcpUrl` naming what the session's MCP endpoint serves (the runner process and the
 * profile's tool selection). While it stays the same, a worker may keep its MCP connection and tool list across the
 * session's runs instead of a handshake per run.
 */
export const TOOLSET_PARAM = 'svc_toolset';

/** Provider tool names allow letters, digits, `_` and `-` (at most 64). */
export function toolNameSafe(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
}

/**
 * The name a run's events (and the model of the `general` runtime) give an MCP server's tool: the spec's `toolPrefix`
 * (default `<name>__`) and the tool's name. The runner names a held call by it, as the `tool_call` event did.
 */
export function mcpEventToolName(spec: Pick<McpServerSpec, 'name' | 'toolPrefix'>, tool: string): string {
  return toolNameSafe((spec.toolPrefix ?? `${toolNameSafe(spec.name)}__`) + tool);
}
