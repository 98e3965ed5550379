import type { McpServerConfig, Options } from '@anthropic-ai/claude-agent-sdk';
import type { Config } from '../../../../config/config.ts';
import type { WorkerRunRequest } from '../../../../contracts/worker.ts';
import { AppError } from '../../../../shared/errors.ts';
import { systemPromptOf } from '../prompt.ts';
import { childEnv, childTraceEnv, type HostEnv } from '../sdk/child-env.ts';
import { currentTraceparent } from '../../../../shared/tracing/index.ts';
import { allowedToolsByServer, type McpServerEntry } from '../sdk/mcp.ts';
import { runModel, runProviderEnv } from '../sdk/provider.ts';
import type { SessionPaths } from '../sdk/session-store.ts';
import { claudeSpawner } from './spawn.ts';

/**
 * `query()` options for one runtime_a run (RUNTIMES.md §2): an isolated config dir, HOME and TMPDIR per session, no
 * filesystem settings, no non-essential traffic, and, unless the operator's break-glass allows host tools, no
 * built-in tools at all: the agent works through the MCP servers only (`dontAsk` denies anything not allow-listed,
 * which also avoids bypassPermissions, refused as root without IS_SANDBOX).
 */
export interface ClaudeRunInput {
  req: WorkerRunRequest;
  config: Config['worker'];
  /** From claudeProviderEnv. */
  providerEnv: Readonly<Record<string, string>>;
  host: HostEnv;
  paths: SessionPaths;
  servers: readonly McpServerEntry[];
  runtimeSessionId: string;
  resume: boolean;
  abortController: AbortController;
  stderr(line: string): void;
}

/** Claude Code appends `/v1/messages` itself, while ANTHROPIC_BASE_URL follows the AI SDK's `…/v1` convention. */
export function claudeBaseUrl(url: string | undefined): string | undefined {
  return url ? url.replace(/\/+$/, '').replace(/\/v1$/, '') : undefined;
}

/** `anthropic:claude-x` (the general runtime's form) and `claude-x` both name the model. */
export function claudeModel(model: string | undefined): string | undefined {
  return model?.replace(/^anthropic:/, '') || undefined;
}

/** The run's Anthropic variables (a model override may replace them), checked before anything touches the disk. */
export function claudeProviderEnv(config: Config['worker'], req: WorkerRunRequest): Readonly<Record<string, string>> {
  const env = runProviderEnv(config.providerEnv, req, { baseUrl: 'ANTHROPIC_BASE_URL', apiKey: 'ANTHROPIC_API_KEY' });
  if (!env.ANTHROPIC_API_KEY) throw new AppError(400, 'ANTHROPIC_API_KEY is not set (needed by runtime_a)');
  return env;
}

function claudeEnv(input: ClaudeRunInput): Record<string, string> {
  const { config, paths, providerEnv } = input;
  const own: Record<string, string> = {
    CLAUDE_CONFIG_DIR: paths.config,
    CLAUDE_CODE_TMPDIR: paths.tmp,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    DISABLE_AUTOUPDATER: '1',
    // Fail fast: retrying a run is the runner's and conductor's call, and the stream must end in one terminal.
    CLAUDE_CODE_MAX_RETRIES: '0',
    // Claude Code's own OpenTelemetry (traces are its enhanced-telemetry beta), under the run's span via TRACEPARENT
    ...(config.otel
      ? { CLAUDE_CODE_ENABLE_TELEMETRY: '1', CLAUDE_CODE_ENHANCED_TELEMETRY_BETA: '1', OTEL_TRACES_EXPORTER: 'otlp', ...childTraceEnv(config.otel, currentTraceparent()) }
      : {}),
  };
  const baseUrl = claudeBaseUrl(providerEnv.ANTHROPIC_BASE_URL);
  if (baseUrl) own.ANTHROPIC_BASE_URL = baseUrl;
  if (config.allowHostTools) own.IS_SANDBOX = '1'; // lets bypassPermissions run as root (containers, CI)
  return childEnv({ host: input.host, paths, providerEnv, providerVars: ['ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL'], allow: config.childEnvAllow, own });
}

function mcpConfig(servers: readonly McpServerEntry[]): Record<string, McpServerConfig> {
  return Object.fromEntries(servers.map((s) => [s.name, { type: s.transport, url: s.url, ...(s.headers ? { headers: s.headers } : {}) }]));
}

function allowedTools(input: ClaudeRunInput): string[] {
  const byServer = allowedToolsByServer(input.req.profile.tools, input.servers);
  if (!byServer) return input.servers.map((s) => `mcp__${s.name}__*`);
  return [...byServer].flatMap(([server, tools]) => tools.map((tool) => `mcp__${server}__${tool}`));
}

export function claudeOptions(input: ClaudeRunInput): Options {
  const tools: Partial<Options> = input.config.allowHostTools
    ? { permissionMode: 'bypassPermissions', allowDangerouslySkipPermissions: true }
    : { tools: [], allowedTools: allowedTools(input), permissionMode: 'dontAsk' };
  return {
    cwd: input.paths.work,
    env: claudeEnv(input),
    settingSources: [],
    strictMcpConfig: true,
    mcpServers: mcpConfig(input.servers),
    // Over stdin, not argv: a command line is readable by every user of the machine, and headers carry credentials.
    mcpServersDelivery: 'initialize',
    ...(input.resume ? { resume: input.runtimeSessionId } : { sessionId: input.runtimeSessionId }),
    model: claudeModel(runModel(input.req)),
    systemPrompt: systemPromptOf(input.req),
    includePartialMessages: true,
    abortController: input.abortController,
    spawnClaudeCodeProcess: claudeSpawner(input.abortController.signal, input.stderr),
    ...tools,
  };
}
