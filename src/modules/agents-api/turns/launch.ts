import type { ProfileSpec } from '../../../contracts/runner.wire.ts';
import { fromSnake } from '../../../contracts/sandbox-limits.ts';
import { AppError } from '../../../shared/errors.ts';
import type { McpServerSpec, ModelOverride } from '../../../contracts/worker.ts';
import { DEFAULT_EFFORT, toolsetPermissions } from '../agents/agent.config.ts';
import { SANDBOX_TOOLS } from '../environments/sandbox.ts';
import type { McpSecret, SessionSecrets } from '../agents/agent.config.ts';
import type { ModelResolver } from '../models/model-ref.ts';
import type { SecretBox } from '../secret-box.ts';
import type { SessionAgent } from '../wire.ts';
import type { InputMessage } from '../sessions/session.schema.ts';

/**
 * What a turn's run is made of. Each agent session has a profile of its own on the runner (system prompt, toolkit
 * scope), created with the session; what may change between turns (the model, with its address and key) and what
 * needs a per-run credential (the function-tool endpoint, MCP servers with their headers) travels with each run.
 */
export const FUNCTION_TOOLS_SERVER = 'svc_functions';

export function functionTools(agent: SessionAgent): Array<{ name: string; description: string; parameters: Record<string, unknown> }> {
  return agent.tools.filter((t) => t.type === 'function') as unknown as Array<{ name: string; description: string; parameters: Record<string, unknown> }>;
}

/** The tools a `multi_agent` session's model gets for subagents (subagents.service.ts runs them). */
export const SPAWN_SUBAGENT = 'spawn_subagent';
export const MESSAGE_SUBAGENT = 'send_subagent_input';

/**
 * How deep subagents nest: the session's agent is depth 0, its subagents 1, theirs 2, and so on; an agent at this
 * depth is not given the subagent tools (the spec lists nested subagents and states no limit: this one keeps a
 * runaway chain finite).
 */
export const MAX_SUBAGENT_DEPTH = 3;

/** The subagent tools of an agent at `depth` (0: the session's own). */
export function subagentTools(agent: SessionAgent, depth = 0): Array<{ name: string; description: string; parameters: Record<string, unknown> }> {
  if (!agent.multi_agent?.enabled || depth >= MAX_SUBAGENT_DEPTH) return [];
  return [
    {
      name: SPAWN_SUBAGENT,
      description: 'Start a subagent on a task. It works in a conversation of its own and its final answer is returned as {subagent_id, output}.',
      parameters: {
        type: 'object',
        properties: { task: { type: 'string', description: "The subagent's task: its first message" }, name: { type: 'string', description: 'A short nickname' } },
        required: ['task'],
      },
    },
    {
      name: MESSAGE_SUBAGENT,
      description: 'Send another message to a subagent started earlier (it resumes its conversation); its answer is returned as {subagent_id, output}.',
      parameters: {
        type: 'object',
        properties: { subagent_id: { type: 'string' }, message: { type: 'string' } },
        required: ['subagent_id', 'message'],
      },
    },
  ];
}

/** Tools served by the function-tool endpoint: the engine announces their calls itself, the translator skips them. */
export function endpointToolNames(agent: SessionAgent, depth = 0): Set<string> {
  return new Set([...functionTools(agent), ...subagentTools(agent, depth)].map((t) => t.name));
}

/** What sessionProfile reads of an environment: its type, `config.limits` and the resolved `network.access`. */
export interface ProfiledEnvironment {
  type: string;
  config?: { limits?: Record<string, number | undefined> | null } | null;
  network?: { access: string } | null;
}

/**
 * The session's own profile. No sandbox (`environment: none`) means no platform toolkit: `@none` selects nothing. A
 * hosted environment is a sandbox on the runner's process substrate: file tools and `run_command` in `/work`. Its
 * `config.limits` (snake_case) are the profile's `limits`: the conductor holds them to the tenant's ceilings on the way.
 * Its `network.access` (resolved: a template's, or `enabled` by default) is the profile's `network`: `enabled` lets its
 * commands and stdio MCP servers share the runner's network, anything else leaves them only a loopback device.
 */
export function sessionProfile(name: string, agent: SessionAgent, environment: ProfiledEnvironment, runtimeModel: string): ProfileSpec {
  const limits = environment.type === 'none' || !environment.config?.limits ? undefined : fromSnake(environment.config.limits);
  const network = environment.type !== 'none' && environment.network?.access === 'enabled';
  const parts = [agent.instructions?.trim()].filter(Boolean) as string[];
  const permissions = toolsetPermissions(agent.agent_toolset);
  if (agent.text.format.type === 'json_schema') parts.push(`Answer with JSON only, matching this JSON Schema:\n${JSON.stringify(agent.text.format.schema)}`);
  return {
    id: name,
    name,
    runtime: 'general',
    model: runtimeModel,
    ...(parts.length ? { systemPrompt: parts.join('\n\n') } : {}),
    tools: environment.type === 'none' ? ['@none'] : [...SANDBOX_TOOLS],
    // the memory tools come with mounted stores, also without a sandbox
    ...(agent.memory_stores?.length ? { memoryStores: agent.memory_stores } : {}),
    ...(limits && Object.keys(limits).length ? { limits } : {}),
    ...(network ? { network: 'enabled' as const } : {}),
    // the agent's `agent_toolset` permission policies, as the runner's permission gate reads them
    ...(permissions ? { permissions } : {}),
  };
}

/** The end user a session's runs act for (per_user memory stores partition by it): its `metadata.user_id`. */
export function endUserOf(metadata: Record<string, string>): { userId?: string } {
  const id = metadata.user_id;
  return id ? { userId: id } : {};
}

/**
 * The agent's model settings for a run's model. The default effort stands for "the model's default" (an agent that
 * never set `reasoning` reads back `medium`), so only a chosen effort or a summary is sent; `service_tier: auto` is
 * the provider's default too. The worker passes each to the providers that support it.
 */
export function withSettings<M extends ModelOverride>(model: M, agent: SessionAgent): M {
  const { effort, summary } = agent.reasoning;
  return {
    ...model,
    ...(effort && (effort !== DEFAULT_EFFORT || summary) ? { reasoningEffort: effort } : {}),
    ...(summary ? { reasoningSummary: summary } : {}),
    ...(agent.service_tier !== 'auto' ? { serviceTier: agent.service_tier } : {}),
  };
}

/** The prompt of a run: the text of its user messages (images by URL), one message per paragraph. */
export function promptOf(messages: InputMessage[]): string {
  return messages
    .map((m) => m.content.map((c) => (c.type === 'input_text' ? c.text : `[image: ${c.image_url}]`)).join('\n'))
    .join('\n\n');
}

const aad = (tenantId: string, sessionId: string) => `agent_sessions:${tenantId}:${sessionId}`;

export function sealSecrets(box: SecretBox, tenantId: string, sessionId: string, secrets: SessionSecrets): Record<string, unknown> {
  return secrets.mcp && Object.keys(secrets.mcp).length ? { sealed: box.seal(JSON.stringify(secrets), aad(tenantId, sessionId)) } : {};
}

export function openSecrets(box: SecretBox, tenantId: string, sessionId: string, stored: Record<string, unknown>): SessionSecrets {
  return typeof stored.sealed === 'string' ? (JSON.parse(box.open(stored.sealed, aad(tenantId, sessionId))) as SessionSecrets) : {};
}

/** The agent's remote MCP servers: tenant-supplied URLs, checked against the address policy when a run starts. */
export function agentMcpUrls(agent: SessionAgent): Array<{ name: string; url: string }> {
  return agent.tools.flatMap((tool) => {
    const transport = tool.type === 'mcp' ? (tool.transport as { type: string; server_url?: string }) : undefined;
    return transport?.type === 'http' && transport.server_url ? [{ name: tool.server_label as string, url: transport.server_url }] : [];
  });
}

/**
 * The MCP servers of one run: the function-tool endpoint (function and subagent tools, bare names; a call may wait
 * `callTimeoutMs` for the client's answer), which the run's runner calls with the run's token, renewed while the run
 * lasts (`runTokenAuth`: no token is minted for it here, and the worker holds none), and the agent's MCP tools: HTTP
 * ones with their auth (the session's own `authorization`, else the vault credential's bearer from `bearers`, by
 * label, plus static headers), stdio ones for the runner to start in the environment's sandbox (with the
 * environment's `env_vars` values and install variables); both with their `allowed_tools`.
 */
export function runMcpServers(opts: {
  selfUrl: string;
  sessionId: string;
  agent: SessionAgent;
  /** The depth of the agent whose run this is (0: the session's own; its subagents' runs are deeper). */
  depth?: number;
  secrets: SessionSecrets;
  bearers?: ReadonlyMap<string, string>;
  callTimeoutMs?: number;
  /** The hosted environment's `env` (values of stdio servers' `env_vars`) and its install variables (`PATH`, `NODE_PATH`). */
  environment?: { variables: Readonly<Record<string, string>>; install: Readonly<Record<string, string>> };
}): McpServerSpec[] {
  const servers: McpServerSpec[] = [];
  if (functionTools(opts.agent).length || subagentTools(opts.agent, opts.depth).length) {
    servers.push({
      name: FUNCTION_TOOLS_SERVER,
      transport: 'http',
      url: `${opts.selfUrl}/api/agent-sessions/${encodeURIComponent(opts.sessionId)}/function-tools/mcp`,
      runTokenAuth: true,
      toolPrefix: '',
      // this conductor's own endpoint: the address policy is for the tenant's servers
      platform: true,
      ...(opts.callTimeoutMs ? { callTimeoutMs: opts.callTimeoutMs } : {}),
    });
  }
  for (const tool of opts.agent.tools) {
    if (tool.type !== 'mcp') continue;
    const transport = tool.transport as { type: string; server_url?: string };
    const label = tool.server_label as string;
    const secret: McpSecret = opts.secrets.mcp?.[label] ?? {};
    const allowedTools = tool.allowed_tools as string[] | null | undefined;
    if (transport.type === 'stdio') {
      // started by the runner inside the environment's sandbox for the run (refused at session creation without one)
      const stdio = tool.transport as { command: string; cwd?: string; args?: string[] | null; env_vars?: string[] | null };
      const env = { ...opts.environment?.install, ...stdioVariables(label, stdio.env_vars ?? [], opts.environment?.variables ?? {}), ...secret.env };
      servers.push({
        name: label,
        transport: 'stdio',
        command: stdio.command,
        ...(stdio.args?.length ? { args: stdio.args } : {}),
        ...(stdio.cwd ? { cwd: stdio.cwd } : {}),
        ...(Object.keys(env).length ? { env } : {}),
        ...(allowedTools ? { allowedTools } : {}),
      });
      continue;
    }
    if (transport.type !== 'http' || !transport.server_url) continue;
    const bearer = secret.authorization ?? opts.bearers?.get(label);
    const headers = { ...secret.headers, ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) };
    servers.push({ name: label, transport: 'http', url: transport.server_url, ...(Object.keys(headers).length ? { headers } : {}), ...(allowedTools ? { allowedTools } : {}) });
  }
  return servers;
}

/**
 * stdio MCP servers start inside the environment's sandbox, so a session without one (`environment: none`) cannot
 * have them (400).
 */
export function refuseStdioMcp(tools: SessionAgent['tools'], environment: { type: string }): void {
  tools.forEach((t, i) => {
    if (t.type !== 'mcp') return;
    const transport = t.transport as { type?: string };
    if (transport.type !== 'stdio') return;
    if (environment.type === 'none') {
      throw new AppError(400, `agent.tools[${i}].transport: a stdio MCP server runs in the session's environment; environment none has none`, { code: 'invalid_request_error' });
    }
  });
}

/**
 * A stdio MCP server's `env_vars` name variables of the environment's `env` (their values stay sealed with it): each
 * name must be there when the session is created (400 naming the entry otherwise).
 */
export function checkEnvVars(tools: SessionAgent['tools'], environmentEnv: Readonly<Record<string, string>>): void {
  tools.forEach((t, i) => {
    const transport = t.type === 'mcp' ? (t.transport as { type?: string; env_vars?: string[] | null }) : undefined;
    if (transport?.type !== 'stdio') return;
    (transport.env_vars ?? []).forEach((name, j) => {
      if (!Object.hasOwn(environmentEnv, name)) {
        throw new AppError(400, `agent.tools[${i}].transport.env_vars[${j}]: the environment's env has no variable ${JSON.stringify(name)}; set it in environment.env (or the template's env)`, { code: 'invalid_request_error' });
      }
    });
  });
}

/** The values of `names` from the environment's `env`; a name it lacks fails the run (checked at creation too). */
function stdioVariables(label: string, names: readonly string[], variables: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    if (!Object.hasOwn(variables, name)) throw new AppError(400, `MCP server ${label}: env_vars names ${JSON.stringify(name)}, which the environment's env does not set`);
    out[name] = variables[name];
  }
  return out;
}

/** The `general` runtime's model name of a session model, without its key (the profile and usage records show it). */
export function runtimeModelName(models: ModelResolver, model: string): string {
  const ref = models.parse(model);
  if (ref.kind === 'byok') return `${ref.provider}:${ref.modelId}`;
  return ref.aggregator === 'demo' ? `demo:${ref.modelId}` : `openai-compatible:${ref.modelId}`;
}
