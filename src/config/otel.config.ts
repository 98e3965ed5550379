import { ConfigError, url } from './parse.ts';

const TRACE_EXPORTERS = ['otlp', 'console', 'none'];
const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'];

/**
 * The OTEL_* variables when they ask for traces, per the OpenTelemetry environment specification: OTEL_SDK_DISABLED
 * `true` turns everything off; OTEL_TRACES_EXPORTER names the exporters (`none` alone: off); without it an OTLP
 * endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) turns OTLP export on. Exporters and
 * protocols that are not bundled (zipkin, grpc) are refused rather than silently dropped.
 */
export function otelOf(env: Record<string, string | undefined>): Readonly<Record<string, string>> | undefined {
  const vars: Record<string, string> = {};
  for (const [k, val] of Object.entries(env)) if (k.startsWith('OTEL_') && val) vars[k] = val;
  if (vars.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  const exporters = vars.OTEL_TRACES_EXPORTER?.split(',').map((s) => s.trim()).filter(Boolean);
  for (const name of exporters ?? []) {
    if (!TRACE_EXPORTERS.includes(name)) throw new ConfigError('OTEL_TRACES_EXPORTER', `got "${name}"; allowed: ${TRACE_EXPORTERS.join(', ')} (a comma list)`);
  }
  const wanted = exporters ? exporters.some((e) => e !== 'none') : !!(vars.OTEL_EXPORTER_OTLP_ENDPOINT || vars.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  if (!wanted) return undefined;
  for (const name of ['OTEL_EXPORTER_OTLP_PROTOCOL', 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL']) {
    const value = vars[name];
    if (value !== undefined && !OTLP_PROTOCOLS.includes(value)) throw new ConfigError(name, `got "${value}"; allowed: ${OTLP_PROTOCOLS.join(', ')} (OTLP over gRPC is not bundled)`);
  }
  for (const name of ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']) url(name, vars[name]);
  return Object.freeze(vars);
}
