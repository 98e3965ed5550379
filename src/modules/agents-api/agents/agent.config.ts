import type { AgentConfig, AgentReasoning, AgentSettings, AgentText, AgentToolset, AgentToolView, MultiAgentConfig, PermissionPolicy, SessionAgent, ToolConfig } from '../wire.ts';
import type { AgentCreateParams, AgentUpdateParams, SessionAgentParams, ToolParam } from './agent.schema.ts';
import type * as v from 'valibot';
import type { AgentToolsetParam, MultiAgentParam, ReasoningParam, TextParam } from './agent.schema.ts';
import { mcpToolIdentity, permissionsProblem, type PermissionMap } from '../../../contracts/permissions.ts';
import { badRequest } from '../../../shared/errors.ts';

/**
 * Resolving request params into the stored shapes of §2.3/§2.4: every default spelled out (multi-agent off, reasoning
 * effort of the model, text format `text` at `medium` verbosity, service tier `auto`, tools `[]`), partial updates,
 * and the per-session snapshot with its overrides. Secrets of session MCP tools are split off here and never echoed.
 */
export const DEFAULT_EFFORT: NonNullable<AgentReasoning['effort']> = 'medium';
export const DEFAULT_MAX_SUBAGENTS = 6;

export function resolveMultiAgent(p: v.InferOutput<typeof MultiAgentParam> | null | undefined): MultiAgentConfig {
  if (!p?.enabled) return { enabled: false, max_concurrent_subagents: null };
  return { enabled: true, max_concurrent_subagents: p.max_concurrent_subagents ?? DEFAULT_MAX_SUBAGENTS };
}

export function resolveReasoning(p: v.InferOutput<typeof ReasoningParam> | null | undefined): AgentReasoning {
  return { effort: p?.effort ?? DEFAULT_EFFORT, summary: p?.summary ?? null };
}

export function resolveText(p: v.InferOutput<typeof TextParam> | null | undefined): AgentText {
  return { format: p?.format ?? { type: 'text' }, verbosity: p?.verbosity ?? 'medium' };
}

/**
 * `agent_toolset` (svc extension, Claude Managed Agents' permission-policy naming) resolved with its defaults; null
 * (absent or `null`) leaves every tool `always_allow`. A name no built-in tool or bundle has is a 400. Its
 * `mcp_toolsets` (one per `mcp` tool's `server_label`, checked against the tools by `checkMcpToolsets`) default to
 * `always_ask`, as Claude's `mcp_toolset` does; an MCP server without an entry follows `default_config`.
 */
export function resolveToolset(p: v.InferOutput<typeof AgentToolsetParam> | null | undefined, field = 'agent_toolset'): AgentToolset | undefined {
  if (!p) return undefined;
  const toolset: AgentToolset = {
    default_config: { permission_policy: policy(p.default_config?.permission_policy) ?? { type: 'always_allow' } },
    configs: (p.configs ?? []).map(toolConfig),
  };
  const problem = permissionsProblem(builtinPermissions(toolset), {});
  if (problem) {
    const name = /^permissions\.(.*?): /.exec(problem)?.[1];
    const at = toolset.configs.findIndex((c) => c.name === name);
    throw badRequest(`${field}.configs[${at}].name: ${problem.slice(`permissions.${name}: `.length)}`);
  }
  if (p.mcp_toolsets) {
    toolset.mcp_toolsets = p.mcp_toolsets.map((m, i) => {
      if (p.mcp_toolsets!.findIndex((o) => o.mcp_server_name === m.mcp_server_name) !== i) {
        throw badRequest(`${field}.mcp_toolsets[${i}].mcp_server_name: ${m.mcp_server_name} has an entry already`);
      }
      return {
        mcp_server_name: m.mcp_server_name,
        default_config: { permission_policy: policy(m.default_config?.permission_policy) ?? { type: 'always_ask' } },
        configs: (m.configs ?? []).map(toolConfig),
      };
    });
  }
  return toolset;
}

const policy = (x: { type: PermissionPolicy['type'] } | null | undefined): PermissionPolicy | null => (x ? { type: x.type } : null);
const toolConfig = (c: { name: string; enabled?: boolean | null; permission_policy?: { type: PermissionPolicy['type'] } | null }): ToolConfig => ({
  name: c.name,
  enabled: c.enabled ?? true,
  permission_policy: policy(c.permission_policy),
});

/**
 * Each `mcp_toolsets[i].mcp_server_name` must be the `server_label` of one of `tools`' `mcp` tools: a policy for a
 * server the run never has would be one the gate never sees (400 naming the entry).
 */
export function checkMcpToolsets(toolset: AgentToolset | undefined, tools: readonly AgentToolView[], field = 'agent_toolset'): void {
  const labels = tools.flatMap((t) => (t.type === 'mcp' ? [t.server_label as string] : []));
  toolset?.mcp_toolsets?.forEach((m, i) => {
    if (labels.includes(m.mcp_server_name)) return;
    const have = labels.length ? `its mcp tools are ${labels.join(', ')}` : 'it has no mcp tools';
    throw badRequest(`${field}.mcp_toolsets[${i}].mcp_server_name: ${m.mcp_server_name} is not the server_label of one of the agent's mcp tools (${have})`);
  });
}

/**
 * The run profile's `permissions` for an agent's toolset: `always_allow` → allow, `always_ask` → ask, `enabled: false`
 * → deny; the default config is the `*` selector (every tool, MCP servers' included), each config's `name` (a tool,
 * or a bundle such as `@exec`) its own; an MCP toolset's default is `mcp:<server>/*`, its configs `mcp:<server>/<tool>`.
 */
export function toolsetPermissions(t: AgentToolset | undefined): PermissionMap | undefined {
  if (!t) return undefined;
  const map: PermissionMap = builtinPermissions(t) ?? {};
  for (const m of t.mcp_toolsets ?? []) {
    map[mcpToolIdentity(m.mcp_server_name, '*')] = of(m.default_config.permission_policy);
    addConfigs(map, m.configs, (name) => mcpToolIdentity(m.mcp_server_name, name));
  }
  return Object.keys(map).length ? map : undefined;
}

const of = (p: PermissionPolicy): 'allow' | 'ask' => (p.type === 'always_ask' ? 'ask' : 'allow');

function addConfigs(map: PermissionMap, configs: readonly ToolConfig[], selector: (name: string) => string): void {
  for (const c of configs) {
    if (!c.enabled) map[selector(c.name)] = 'deny';
    else if (c.permission_policy) map[selector(c.name)] = of(c.permission_policy);
  }
}

function builtinPermissions(t: AgentToolset): PermissionMap | undefined {
  const map: PermissionMap = {};
  if (t.default_config.permission_policy.type !== 'always_allow') map['*'] = of(t.default_config.permission_policy);
  addConfigs(map, t.configs, (name) => name);
  return Object.keys(map).length ? map : undefined;
}

/** Connection details of one MCP tool that never appear in a response (authorization, headers, stdio env). */
export interface McpSecret {
  headers?: Record<string, string>;
  authorization?: string;
  env?: Record<string, string>;
}
export type SessionSecrets = { mcp?: Record<string, McpSecret> };

/** A tool as an agent returns it (PersistedAgentTool). Persisted MCP `headers` are not secret and are echoed. */
export function persistedTool(t: ToolParam): AgentToolView {
  switch (t.type) {
    case 'function':
      return { type: 'function', name: t.name, description: t.description, parameters: t.parameters, defer_loading: t.defer_loading ?? false };
    case 'tool_search':
      return { type: 'tool_search' };
    case 'programmatic_tool_calling':
      return { type: 'programmatic_tool_calling', enabled: t.enabled ?? true };
    case 'web_search':
      return {
        type: 'web_search',
        allowed_domains: t.allowed_domains ?? null,
        context_size: t.context_size ?? 'medium',
        location: t.location
          ? { city: t.location.city ?? null, country: t.location.country ?? null, region: t.location.region ?? null, timezone: t.location.timezone ?? null }
          : null,
        mode: t.mode ?? 'live',
      };
    case 'mcp': {
      const tr = t.transport;
      const transport =
        tr.type === 'http'
          ? { type: 'http', server_url: tr.server_url, headers: tr.headers ?? {} }
          : { type: 'stdio', command: tr.command, cwd: tr.cwd, args: tr.args ?? [], env_vars: tr.env_vars ?? [] };
      return {
        type: 'mcp',
        server_label: t.server_label,
        transport,
        allowed_tools: t.allowed_tools ?? null,
        connection_origin: t.connection_origin ?? 'service',
        credential_id: t.credential_id ?? null,
        request_metadata: t.request_metadata ?? {},
        required: t.required ?? false,
      };
    }
  }
}

/** The session's view of a tool (AgentTool): MCP transports lose their headers; the secrets go to `secrets.mcp`. */
function sessionTool(tool: AgentToolView, secrets: SessionSecrets, given?: ToolParam): AgentToolView {
  if (tool.type !== 'mcp') return tool;
  const transport = tool.transport as { type: string; server_url?: string; headers?: Record<string, string>; [k: string]: unknown };
  const label = tool.server_label as string;
  const secret: McpSecret = {};
  if (transport.headers && Object.keys(transport.headers).length) secret.headers = transport.headers;
  const raw = given?.type === 'mcp' ? (given.transport as { authorization?: string | null; env?: Record<string, string> | null }) : undefined;
  if (raw?.authorization) secret.authorization = raw.authorization;
  if (raw?.env) secret.env = raw.env;
  if (Object.keys(secret).length) (secrets.mcp ??= {})[label] = secret;
  const view = transport.type === 'http' ? { type: 'http', server_url: transport.server_url } : { type: 'stdio', command: transport.command, cwd: transport.cwd, args: transport.args, env_vars: transport.env_vars };
  return { ...tool, transport: view };
}

export function configFromCreate(p: AgentCreateParams): AgentConfig {
  const config: AgentConfig = {
    instructions: p.instructions ?? null,
    metadata: p.metadata ?? {},
    model: p.model,
    multi_agent: resolveMultiAgent(p.multi_agent),
    name: p.name ?? null,
    reasoning: resolveReasoning(p.reasoning),
    service_tier: p.service_tier ?? 'auto',
    text: resolveText(p.text),
    tools: (p.tools ?? []).map(persistedTool),
    ...(p.memory_stores?.length ? { memory_stores: p.memory_stores } : {}),
    ...withToolset(resolveToolset(p.agent_toolset)),
  };
  checkMcpToolsets(config.agent_toolset, config.tools);
  return config;
}

const withToolset = (t: AgentToolset | undefined): { agent_toolset?: AgentToolset } => (t ? { agent_toolset: t } : {});

/** Partial update: only the fields sent change; `null` resets a field to its default (metadata `{}`, name null). */
export function applyUpdate(current: AgentConfig, p: AgentUpdateParams): AgentConfig {
  const next = { ...current };
  if (p.model !== undefined) next.model = p.model;
  if (p.instructions !== undefined) next.instructions = p.instructions;
  if (p.metadata !== undefined) next.metadata = p.metadata ?? {};
  if (p.name !== undefined) next.name = p.name;
  if (p.multi_agent !== undefined) next.multi_agent = resolveMultiAgent(p.multi_agent);
  if (p.reasoning !== undefined) next.reasoning = resolveReasoning(p.reasoning);
  if (p.service_tier !== undefined) next.service_tier = p.service_tier ?? 'auto';
  if (p.text !== undefined) next.text = resolveText(p.text);
  if (p.tools !== undefined) next.tools = (p.tools ?? []).map(persistedTool);
  if (p.memory_stores !== undefined) {
    if (p.memory_stores?.length) next.memory_stores = p.memory_stores;
    else delete next.memory_stores;
  }
  if (p.agent_toolset !== undefined) {
    const toolset = resolveToolset(p.agent_toolset);
    if (toolset) next.agent_toolset = toolset;
    else delete next.agent_toolset;
  }
  checkMcpToolsets(next.agent_toolset, next.tools);
  return next;
}

/**
 * The effective configuration of a new session: the saved agent (if any) with the session's overrides applied, the
 * agent's name frozen, secrets separated. Without a saved agent, `model` is required (checked by the caller).
 */
export function sessionSnapshot(agentId: string, base: AgentConfig | undefined, o: SessionAgentParams | undefined): { agent: SessionAgent; secrets: SessionSecrets } {
  const settings: AgentSettings = {
    instructions: o?.instructions !== undefined ? o.instructions : (base?.instructions ?? null),
    model: o?.model ?? base?.model ?? '',
    multi_agent: o?.multi_agent !== undefined ? resolveMultiAgent(o.multi_agent) : (base?.multi_agent ?? resolveMultiAgent(undefined)),
    reasoning: o?.reasoning !== undefined ? resolveReasoning(o.reasoning) : (base?.reasoning ?? resolveReasoning(undefined)),
    service_tier: o?.service_tier ?? base?.service_tier ?? 'auto',
    text: o?.text !== undefined ? resolveText(o.text) : (base?.text ?? resolveText(undefined)),
    tools: [],
  };
  const memory = o?.memory_stores !== undefined ? (o.memory_stores ?? []) : (base?.memory_stores ?? []);
  if (memory.length) settings.memory_stores = memory;
  const toolset = o?.agent_toolset !== undefined ? resolveToolset(o.agent_toolset, 'agent.agent_toolset') : base?.agent_toolset;
  if (toolset) settings.agent_toolset = toolset;
  const secrets: SessionSecrets = {};
  if (o?.tools !== undefined) settings.tools = (o.tools ?? []).map((t) => sessionTool(persistedTool(t), secrets, t));
  else settings.tools = (base?.tools ?? []).map((t) => sessionTool(t, secrets));
  // the session's tools may drop a server the agent's policies name: the check names the toolset in force
  checkMcpToolsets(toolset, settings.tools, o?.agent_toolset !== undefined ? 'agent.agent_toolset' : 'agent_toolset');
  return { agent: { id: agentId, name: base?.name ?? null, ...settings }, secrets };
}
