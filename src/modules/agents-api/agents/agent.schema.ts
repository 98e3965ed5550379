import * as v from 'valibot';
import { JsonObject } from '../../../shared/http.ts';
import { Metadata } from '../validation.ts';
import { MemoryMounts } from '../../../contracts/memory.ts';
import { cursorPageOf, deletedOf, Timestamp } from '../wire.schema.ts';

export { Metadata };

/**
 * Request bodies of agents (spec §3.1) and the agent overrides of a session (§3.2). Nullable fields accept `null`;
 * the service turns omitted and null values into the resolved defaults of §2.3. The session's tool params differ
 * only in their MCP transport, which may carry write-only secrets (`authorization`, `headers`, stdio `env`).
 */
const nullish = <S extends v.GenericSchema>(s: S) => v.optional(v.nullable(s));
const StringList = v.array(v.string());
const StringMap = v.record(v.string(), v.string());


const FunctionName = v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{1,64}$/, 'a function name of 1-64 letters, digits, underscores or hyphens'));

const FunctionTool = v.object({
  type: v.literal('function'),
  name: FunctionName,
  description: v.string(),
  parameters: JsonObject,
  defer_loading: v.optional(v.boolean()),
});

const WebSearchTool = v.object({
  type: v.literal('web_search'),
  allowed_domains: nullish(StringList),
  context_size: nullish(v.picklist(['low', 'medium', 'high'])),
  location: nullish(
    v.object({ city: nullish(v.string()), country: nullish(v.string()), region: nullish(v.string()), timezone: nullish(v.string()) }),
  ),
  mode: nullish(v.picklist(['disabled', 'cached', 'live'])),
});

function mcpTool<T extends v.GenericSchema>(transport: T) {
  return v.object({
    type: v.literal('mcp'),
    server_label: v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{1,64}$/, 'a label of 1-64 letters, digits, underscores or hyphens')),
    transport,
    allowed_tools: nullish(StringList),
    connection_origin: nullish(v.picklist(['service', 'environment'])),
    credential_id: nullish(v.string()),
    request_metadata: nullish(JsonObject),
    required: v.optional(v.boolean()),
  });
}

const HttpUrl = v.pipe(v.string(), v.url('a URL'), v.regex(/^https?:\/\//, 'an http(s) URL'));
const Stdio = { type: v.literal('stdio'), command: v.string(), cwd: v.string(), args: nullish(StringList), env_vars: nullish(StringList) };

const PersistedMcpTransport = v.variant('type', [
  v.object({ type: v.literal('http'), server_url: HttpUrl, headers: nullish(StringMap) }),
  v.object(Stdio),
]);
const SessionMcpTransport = v.variant('type', [
  v.object({ type: v.literal('http'), server_url: HttpUrl, authorization: nullish(v.string()), headers: nullish(StringMap) }),
  v.object({ ...Stdio, env: nullish(StringMap) }),
]);

const commonTools = [
  FunctionTool,
  v.object({ type: v.literal('tool_search') }),
  v.object({ type: v.literal('programmatic_tool_calling'), enabled: v.optional(v.boolean()) }),
  WebSearchTool,
] as const;

export const PersistedToolParam = v.variant('type', [...commonTools, mcpTool(PersistedMcpTransport)]);
export const SessionToolParam = v.variant('type', [...commonTools, mcpTool(SessionMcpTransport)]);
export type ToolParam = v.InferOutput<typeof PersistedToolParam> | v.InferOutput<typeof SessionToolParam>;

export const MultiAgentParam = v.object({
  enabled: v.boolean(),
  max_concurrent_subagents: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(64))),
});
export const ReasoningParam = v.object({
  effort: nullish(v.picklist(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'])),
  summary: nullish(v.picklist(['concise', 'detailed', 'auto'])),
});
export const TextParam = v.object({
  format: nullish(v.variant('type', [v.object({ type: v.literal('text') }), v.object({ type: v.literal('json_schema'), schema: JsonObject })])),
  verbosity: nullish(v.picklist(['low', 'medium', 'high'])),
});
export const ServiceTierParam = v.picklist(['auto', 'default', 'flex', 'priority', 'fast']);

/** svc extension: memory stores the agent's sessions mount (`/memories/<name>/` for its memory tools). */
export const MemoryStoresParam = MemoryMounts;

/**
 * svc extension: permission policies of the agent's tools, in Claude Managed Agents' naming (there the config of an
 * `agent_toolset` tools entry): `default_config.permission_policy` for every tool (its MCP servers' too, unless an
 * `mcp_toolsets` entry sets theirs), `configs` per built-in tool name or bundle (`@exec`), `enabled: false` to refuse
 * a tool. Mapped onto the run profile's `permissions` (agent.config.ts).
 */
const PermissionPolicyParam = v.object({ type: v.picklist(['always_allow', 'always_ask'], 'expected always_allow or always_ask') });
const DefaultConfigParam = v.object({ permission_policy: nullish(PermissionPolicyParam) });
/**
 * `mcp_toolsets` (svc extension, Claude's `mcp_toolset` entries): `mcp_server_name` is an `mcp` tool's `server_label`,
 * `configs` name that server's tools (as the server lists them).
 */
const McpToolsetParam = v.object({
  mcp_server_name: v.pipe(v.string(), v.minLength(1, "an mcp tool's server_label")),
  default_config: nullish(DefaultConfigParam),
  configs: nullish(
    v.pipe(
      v.array(v.object({ name: v.pipe(v.string(), v.minLength(1, "a tool name of the MCP server")), enabled: nullish(v.boolean()), permission_policy: nullish(PermissionPolicyParam) })),
      v.maxLength(100, 'at most 100 configs'),
    ),
  ),
});
export const AgentToolsetParam = v.object({
  default_config: nullish(DefaultConfigParam),
  configs: nullish(
    v.pipe(
      v.array(v.object({ name: v.pipe(v.string(), v.minLength(1, 'a tool name or a bundle such as @exec')), enabled: nullish(v.boolean()), permission_policy: nullish(PermissionPolicyParam) })),
      v.maxLength(100, 'at most 100 configs'),
    ),
  ),
  mcp_toolsets: nullish(v.pipe(v.array(McpToolsetParam), v.maxLength(100, 'at most 100 mcp_toolsets'))),
});

const settings = {
  instructions: nullish(v.string()),
  memory_stores: nullish(MemoryStoresParam),
  agent_toolset: nullish(AgentToolsetParam),
  multi_agent: nullish(MultiAgentParam),
  reasoning: nullish(ReasoningParam),
  service_tier: nullish(ServiceTierParam),
  text: nullish(TextParam),
};
const Model = v.pipe(v.string(), v.minLength(1, 'a non-empty model id'));

export const AgentCreateParams = v.object({
  ...settings,
  model: Model,
  name: nullish(v.string()),
  metadata: nullish(Metadata),
  tools: nullish(v.array(PersistedToolParam)),
});
export type AgentCreateParams = v.InferOutput<typeof AgentCreateParams>;

export const AgentUpdateParams = v.object({
  ...settings,
  model: v.optional(Model),
  name: nullish(v.string()),
  metadata: nullish(Metadata),
  tools: nullish(v.array(PersistedToolParam)),
});
export type AgentUpdateParams = v.InferOutput<typeof AgentUpdateParams>;

/** `agent` of a session: no name or metadata; with `agent_id` every present field overrides the saved agent. */
export const SessionAgentParams = v.object({
  ...settings,
  model: v.optional(Model),
  tools: nullish(v.array(SessionToolParam)),
});
export type SessionAgentParams = v.InferOutput<typeof SessionAgentParams>;

// ── responses (spec §2.1-2.4) ──────────────────────────────────────────────────────────────────────────────────────

const EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'] as const;

export const MultiAgentConfig = v.object({ enabled: v.boolean(), max_concurrent_subagents: v.nullable(v.number()) });
export const AgentReasoning = v.object({ effort: v.nullable(v.picklist(EFFORTS)), summary: v.nullable(v.picklist(['concise', 'detailed', 'auto'])) });
export const AgentText = v.object({
  format: v.variant('type', [v.object({ type: v.literal('text') }), v.object({ type: v.literal('json_schema'), schema: v.record(v.string(), v.unknown()) })]),
  verbosity: v.picklist(['low', 'medium', 'high']),
});
const MemoryStoreMount = v.object({ name: v.string(), access: v.picklist(['read', 'read_write']) });

const PolicyObject = v.object({ type: v.picklist(['always_allow', 'always_ask']) });
const ToolConfigObject = v.object({ name: v.string(), enabled: v.boolean(), permission_policy: v.nullable(PolicyObject) });
const DefaultConfigObject = v.object({ permission_policy: PolicyObject });
function AgentToolsetObject() {
  return v.object({
    default_config: DefaultConfigObject,
    configs: v.array(ToolConfigObject),
    /** svc extension, present when set: one entry per MCP server with a policy; the others follow `default_config`. */
    mcp_toolsets: v.optional(v.array(v.object({ mcp_server_name: v.string(), default_config: DefaultConfigObject, configs: v.array(ToolConfigObject) }))),
  });
}

const StdioTransport = v.object({ type: v.literal('stdio'), command: v.string(), cwd: v.string(), args: v.array(v.string()), env_vars: v.array(v.string()) });

function toolViews<T extends v.GenericSchema>(transport: T) {
  return v.variant('type', [
    v.object({ type: v.literal('function'), name: v.string(), description: v.string(), parameters: v.record(v.string(), v.unknown()), defer_loading: v.boolean() }),
    v.object({ type: v.literal('tool_search') }),
    v.object({ type: v.literal('programmatic_tool_calling'), enabled: v.boolean() }),
    v.object({
      type: v.literal('mcp'),
      server_label: v.string(),
      transport,
      allowed_tools: v.nullable(StringList),
      connection_origin: v.picklist(['service', 'environment']),
      credential_id: v.nullable(v.string()),
      request_metadata: v.record(v.string(), v.unknown()),
      required: v.boolean(),
    }),
    v.object({
      type: v.literal('web_search'),
      allowed_domains: v.nullable(StringList),
      context_size: v.picklist(['low', 'medium', 'high']),
      location: v.nullable(v.object({ city: v.nullable(v.string()), country: v.nullable(v.string()), region: v.nullable(v.string()), timezone: v.nullable(v.string()) })),
      mode: v.picklist(['disabled', 'cached', 'live']),
    }),
  ]);
}

/** A tool as an agent returns it: an http MCP transport keeps its non-secret `headers`. */
export const PersistedAgentTool = toolViews(v.variant('type', [v.object({ type: v.literal('http'), server_url: v.string(), headers: StringMap }), StdioTransport]));
/** A tool as a session's agent returns it: an http MCP transport is its URL only (headers and authorization are never echoed). */
export const SessionAgentTool = toolViews(v.variant('type', [v.object({ type: v.literal('http'), server_url: v.string() }), StdioTransport]));

const settingsOut = {
  instructions: v.nullable(v.string()),
  model: v.string(),
  multi_agent: MultiAgentConfig,
  reasoning: AgentReasoning,
  service_tier: ServiceTierParam,
  text: AgentText,
  /** svc extension, present when set. */
  memory_stores: v.optional(v.array(MemoryStoreMount)),
  /** svc extension, present when set: permission policies (Claude Managed Agents' naming), every default resolved. */
  agent_toolset: v.optional(AgentToolsetObject()),
};

export const AgentObject = v.object({
  id: v.string(),
  object: v.literal('agent'),
  created_at: Timestamp,
  updated_at: Timestamp,
  metadata: StringMap,
  name: v.nullable(v.string()),
  ...settingsOut,
  tools: v.array(PersistedAgentTool),
});

/** `AgentSession.agent`: the session's effective configuration, frozen at creation. */
export const SessionAgentObject = v.object({ id: v.string(), name: v.nullable(v.string()), ...settingsOut, tools: v.array(SessionAgentTool) });

export const AgentPage = cursorPageOf(AgentObject);
export const AgentDeleted = deletedOf('agent.deleted');
