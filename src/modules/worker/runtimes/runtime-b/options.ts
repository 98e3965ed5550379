import type { CodexOptions, ThreadOptions } from '@openai/codex-sdk';
import type { Config } from '../../../../config/config.ts';
import type { WorkerRunRequest } from '../../../../contracts/worker.ts';
import { AppError } from '../../../../shared/errors.ts';
import { systemPromptOf } from '../prompt.ts';
import { childEnv, childTraceEnv, otlpTracesEndpoint, type HostEnv } from '../sdk/child-env.ts';
import { currentTraceparent } from '../../../../shared/tracing/index.ts';
import { allowedToolsByServer, type McpServerEntry } from '../sdk/mcp.ts';
import { runModel, runProviderEnv } from '../sdk/provider.ts';
import type { SessionPaths } from '../sdk/session-store.ts';

/**
 * `new Codex(...)` and thread options for one runtime_b run (RUNTIMES.md §3). The model is reached through a custom
 * provider (`wire_api = "responses"`, plain HTTP SSE; the built-in provider behind `baseUrl` tries WebSockets first),
 * with retries off so a provider failure ends the turn at once. Analytics, plugins and update checks are off, so the
 * only traffic is to the provider and the MCP servers.
 *
 * Host tools, unless the operator's break-glass allows them: Codex 0.163 has no switch for `apply_patch` (the model
 * catalog adds it), so the shell tools are removed by feature flags (`shell_tool`, `unified_exec`; also `view_image`,
 * computer and browser use, sub-agents) and what remains runs in the `read-only` sandbox with approval `never`, which
 * rejects every patch; the developer instructions say so and point at the `svc` MCP tools.
 */
export const CODEX_PROVIDER_ID = 'svc';
type CodexConfigObject = NonNullable<CodexOptions['config']>;

const NO_HOST_TOOLS = 'Host tools are disabled here: there is no shell and the workspace is read-only. Use the tools of the MCP servers (the session toolkit is the `svc` server; find tools with tool_search).';

export interface CodexRunInput {
  req: WorkerRunRequest;
  config: Config['worker'];
  /** From codexProviderEnv. */
  providerEnv: Readonly<Record<string, string>>;
  host: HostEnv;
  paths: SessionPaths;
  servers: readonly McpServerEntry[];
}

/** `openai:gpt-x` (the general runtime's form) and `gpt-x` both name the model. */
export function codexModel(model: string | undefined): string | undefined {
  return model?.replace(/^openai:/, '') || undefined;
}

/**
 * The `mcp_servers` table. Codex takes config as `--config` arguments, readable by every user of the machine, so
 * header values (credentials) travel in the child's environment and the config names them (`env_http_headers`).
 */
function mcpConfig(input: CodexRunInput): { table: Record<string, CodexConfigObject>; env: Record<string, string> } {
  const allow = allowedToolsByServer(input.req.profile.tools, input.servers);
  const env: Record<string, string> = {};
  const table = Object.fromEntries(
    input.servers.map((s, i) => {
      const headers = Object.entries(s.headers ?? {}).map(([name, value], j) => {
        env[`SVC_MCP_HEADER_${i}_${j}`] = value;
        return [name, `SVC_MCP_HEADER_${i}_${j}`];
      });
      const entry: CodexConfigObject = {
        url: s.url,
        // In `exec` mode with approval "never", an MCP call that needs approval is refused; these servers are trusted.
        default_tools_approval_mode: 'approve',
      };
      if (headers.length) entry.env_http_headers = Object.fromEntries(headers);
      // Codex ends a call after 60 s by default; one the runner holds for a person's approval waits longer
      if (s.callTimeoutMs) entry.tool_timeout_sec = Math.ceil(s.callTimeoutMs / 1000);
      if (allow) entry.enabled_tools = allow.get(s.name) ?? [];
      return [s.name, entry];
    }),
  );
  return { table, env };
}

/** The run's OpenAI variables (a model override may replace them), checked before anything touches the disk. */
export function codexProviderEnv(config: Config['worker'], req: WorkerRunRequest): Readonly<Record<string, string>> {
  const env = runProviderEnv(config.providerEnv, req, { baseUrl: 'OPENAI_BASE_URL', apiKey: 'OPENAI_API_KEY' });
  if (!env.OPENAI_API_KEY) throw new AppError(400, 'OPENAI_API_KEY is not set (needed by runtime_b)');
  return env;
}

export function codexOptions(input: CodexRunInput): CodexOptions {
  const { config, paths, providerEnv } = input;
  const hostTools = config.allowHostTools;
  const instructions = [systemPromptOf(input.req), hostTools ? undefined : NO_HOST_TOOLS].filter(Boolean).join('\n\n');
  const mcp = mcpConfig(input);
  return {
    config: {
      model_provider: CODEX_PROVIDER_ID,
      model_providers: {
        [CODEX_PROVIDER_ID]: {
          name: 'svc provider (OpenAI Responses)',
          base_url: providerEnv.OPENAI_BASE_URL || 'https://api.openai.com/v1',
          env_key: 'OPENAI_API_KEY',
          wire_api: 'responses',
          request_max_retries: 0,
          stream_max_retries: 0,
        },
      },
      analytics: { enabled: false },
      check_for_update_on_startup: false,
      features: {
        plugins: false,
        unbounded_connection_retries: false,
        ...(hostTools ? {} : { shell_tool: false, unified_exec: false, view_image: false, computer_use: false, browser_use: false, multi_agent: false }),
      },
      mcp_servers: mcp.table,
      ...(config.otel ? { otel: codexOtel(config.otel) } : {}),
      ...(instructions ? { developer_instructions: instructions } : {}),
    },
    env: childEnv({ host: input.host, paths, providerEnv, providerVars: ['OPENAI_API_KEY'], allow: config.childEnvAllow, own: { ...mcp.env, ...childTraceEnv(config.otel, currentTraceparent()), CODEX_HOME: paths.config } }),
  };
}

/**
 * Codex's own OpenTelemetry is configured in its config (`[otel]`), not by OTEL_* variables: its traces go to the
 * same OTLP/HTTP endpoint in the same encoding, and TRACEPARENT (childTraceEnv) puts them under the run's span.
 * Exporter headers are not passed: config values travel on Codex's command line, where credentials must not.
 */
function codexOtel(otel: Readonly<Record<string, string>>): CodexConfigObject {
  const protocol = (otel.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || otel.OTEL_EXPORTER_OTLP_PROTOCOL) === 'http/json' ? 'json' : 'binary';
  return { environment: 'svc', trace_exporter: { 'otlp-http': { endpoint: otlpTracesEndpoint(otel), protocol } } };
}

export function threadOptions(input: CodexRunInput): ThreadOptions {
  return {
    model: codexModel(runModel(input.req)),
    workingDirectory: input.paths.work,
    skipGitRepoCheck: true,
    sandboxMode: input.config.allowHostTools ? 'workspace-write' : 'read-only',
    approvalPolicy: 'never',
    webSearchMode: 'disabled',
  };
}
