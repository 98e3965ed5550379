import type { SessionPaths } from './session-store.ts';

/**
 * The environment of an SDK child process (Claude Code, Codex), built from an allow-list and never from the whole
 * worker environment: the worker holds every provider key and internal token, and a model-driven process must see
 * only what its runtime needs. Both SDKs replace the child environment entirely when given one, so this is all of it.
 */
export type HostEnv = Readonly<Record<string, string | undefined>>;

/** Lets the child reach its provider through the operator's proxy, if any. */
const PROXY_VARS = ['HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY', 'https_proxy', 'http_proxy', 'no_proxy'];
const FALLBACK_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export interface ChildEnvInput {
  /** The worker's own environment; only PATH and the `allow` names are read from it. */
  host: HostEnv;
  paths: SessionPaths;
  /** `config.providerEnv`: the provider variables the operator configured. */
  providerEnv: Readonly<Record<string, string>>;
  /** Which provider variables this runtime needs (values may be rewritten by the runtime in `own`). */
  providerVars: readonly string[];
  /** `config.childEnvAllow`: extra names the operator lets through. */
  allow: readonly string[];
  /** The runtime's own variables (config dirs, telemetry switches); they win over everything else. */
  own: Readonly<Record<string, string>>;
}

export function childEnv(input: ChildEnvInput): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of input.allow) {
    const value = input.host[name];
    if (value !== undefined) env[name] = value;
  }
  for (const name of [...input.providerVars, ...PROXY_VARS]) {
    const value = input.providerEnv[name];
    if (value) env[name] = value;
  }
  env.PATH = input.host.PATH || FALLBACK_PATH;
  env.HOME = input.paths.home;
  env.TMPDIR = input.paths.tmp;
  return { ...env, ...input.own };
}

/**
 * What an SDK child needs to join the run's trace with its own OpenTelemetry spans: the operator's OTEL_* variables
 * and TRACEPARENT (the worker's active span, which Claude Code and Codex both read); nothing when this worker does
 * not export traces.
 */
export function childTraceEnv(otel: Readonly<Record<string, string>> | undefined, traceparent: string | undefined): Record<string, string> {
  if (!otel) return {};
  return { ...otel, ...(traceparent ? { TRACEPARENT: traceparent } : {}) };
}

/** Where OTLP/HTTP traces go, resolved as the OpenTelemetry SDKs resolve it (for children configured by file, not env). */
export function otlpTracesEndpoint(otel: Readonly<Record<string, string>>): string {
  if (otel.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return otel.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  return `${(otel.OTEL_EXPORTER_OTLP_ENDPOINT || 'http://localhost:4318').replace(/\/+$/, '')}/v1/traces`;
}
