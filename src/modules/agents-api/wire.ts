/**
 * Response shapes of the agents API as the `openai` 7.15.0 SDK reads them (../shared/specs/agents-api-v1.md §2, §5).
 * Wire JSON keeps the spec's snake_case. Only the types this module produces are spelled out.
 */
export type Map = Record<string, string>;

export interface MultiAgentConfig {
  enabled: boolean;
  max_concurrent_subagents: number | null;
}

export interface AgentReasoning {
  effort: 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'max' | null;
  summary: 'concise' | 'detailed' | 'auto' | null;
}

export type TextFormat = { type: 'text' } | { type: 'json_schema'; schema: Record<string, unknown> };

export interface AgentText {
  format: TextFormat;
  verbosity: 'low' | 'medium' | 'high';
}

export type ServiceTier = 'auto' | 'default' | 'flex' | 'priority' | 'fast';

/** A tool as stored on an agent (PersistedAgentTool): MCP transports keep their non-secret headers. */
export type AgentToolView = { type: string; [key: string]: unknown };

/** The configuration an agent and a session snapshot share (everything but ids, names and timestamps). */
export interface AgentSettings {
  instructions: string | null;
  model: string;
  multi_agent: MultiAgentConfig;
  reasoning: AgentReasoning;
  service_tier: ServiceTier;
  text: AgentText;
  tools: AgentToolView[];
  /** svc extension, present when set: the memory stores the agent's sessions mount. */
  memory_stores?: Array<{ name: string; access: 'read' | 'read_write' }>;
  /** svc extension, present when set: permission policies of the agent's built-in tools (Claude Managed Agents' naming). */
  agent_toolset?: AgentToolset;
}

export type PermissionPolicy = { type: 'always_allow' } | { type: 'always_ask' };
/** The agent's built-in tools (those of its environment, and memory): a default policy, and per tool or bundle overrides. */
export interface AgentToolset {
  default_config: { permission_policy: PermissionPolicy };
  configs: ToolConfig[];
  /**
   * svc extension, present when set: policies of the agent's MCP servers' tools, one entry per `mcp` tool's
   * `server_label` (Claude Managed Agents' `mcp_toolset`). A server without one follows `default_config`.
   */
  mcp_toolsets?: McpToolset[];
}
export type ToolConfig = { name: string; enabled: boolean; permission_policy: PermissionPolicy | null };
/** One MCP server's tools: a default policy (`always_ask` unless given, as Claude's), and per tool overrides. */
export interface McpToolset {
  mcp_server_name: string;
  default_config: { permission_policy: PermissionPolicy };
  configs: ToolConfig[];
}

/** What agents.config holds: the Agent minus id, object and timestamps. */
export interface AgentConfig extends AgentSettings {
  name: string | null;
  metadata: Map;
}

export interface Agent extends AgentConfig {
  id: string;
  object: 'agent';
  created_at: number;
  updated_at: number;
}

/** AgentSession.agent: the effective configuration of one session, frozen at creation. */
export interface SessionAgent extends AgentSettings {
  id: string;
  name: string | null;
}

export interface TokenUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export type RequiredAction =
  | { type: 'function_call'; name: string; call_id: string; arguments: unknown; turn_id: string }
  | { type: 'environment_connection'; environment_id: string }
  /**
   * A call to a built-in tool under `always_ask`: answered with an `agent.session.input.tool_approval` input event.
   * `subagent_id`: the subagent whose call it is (absent for the session's own calls).
   */
  | { type: 'tool_approval'; id: string; tool_name: string; arguments: unknown; turn_id: string; subagent_id?: string };

export type SessionStatus = 'idle' | 'in_progress' | 'requires_action' | 'failed';

export interface AgentSession {
  id: string;
  object: 'agent.session';
  agent: SessionAgent;
  created_at: number;
  environment: { type: string; id?: string; [key: string]: unknown };
  error: string | null;
  last_active_at: number;
  metadata: Map;
  required_actions: RequiredAction[];
  status: SessionStatus;
  usage: TokenUsage | null;
  vault_ids: string[];
}

export type TurnStatus = 'queued' | 'in_progress' | 'waiting' | 'completed' | 'failed' | 'cancelled';

export interface SessionTurnError {
  code: string;
  message: string;
}

export interface Turn {
  id: string;
  object: 'agent.session.turn';
  agent_id: string;
  completed_at: number | null;
  created_at: number;
  error: SessionTurnError | null;
  session_id: string;
  started_at: number | null;
  status: TurnStatus;
  subagent_id: string | null;
  usage: TokenUsage | null;
}

/** An AgentSessionItem (§2.6): every variant has `id`, `type` and `turn_id`; no `object`. */
export type SessionItem = { id: string; type: string; turn_id: string; [key: string]: unknown };

/** An AgentSessionEvent before the event store gives it its `event_id`. */
export type SessionEventBody = { type: string; [key: string]: unknown };
export type SessionEvent = SessionEventBody & { event_id: string };

/** Unix seconds of a timestamp column. */
export function unixSeconds(d: Date | string | null): number | null {
  return d === null ? null : Math.floor(new Date(d).getTime() / 1000);
}
