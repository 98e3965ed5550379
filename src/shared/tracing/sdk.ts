import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, ConsoleSpanExporter, NodeTracerProvider, type SpanExporter } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { Tracing } from './index.ts';

/**
 * The OpenTelemetry SDK, imported by `startTracing` only when the OTEL_* variables ask for traces. The tracer provider
 * of `sdk-trace-node` brings the AsyncLocalStorage context manager and the W3C trace-context propagator; each
 * exporter named by OTEL_TRACES_EXPORTER (config.ts checked the names: `otlp`, `console`) gets a batch processor.
 * OTLP goes over HTTP as protobuf (the spec's default) or JSON (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`); the
 * exporters, the batch processor and the sampler read the rest of the standard variables themselves (endpoint,
 * headers, timeout, OTEL_BSP_*, OTEL_TRACES_SAMPLER), and OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES override the
 * resource (service.name `svc`, service.version, `svc.role`).
 */
export async function startSdk(env: Readonly<Record<string, string>>, resource: { role: string; version: string }): Promise<Tracing> {
  const exporters: SpanExporter[] = [];
  for (const name of exporterNames(env)) {
    if (name === 'console') exporters.push(new ConsoleSpanExporter());
    if (name === 'otlp') {
      const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || 'http/protobuf';
      const { OTLPTraceExporter } = protocol === 'http/json' ? await import('@opentelemetry/exporter-trace-otlp-http') : await import('@opentelemetry/exporter-trace-otlp-proto');
      exporters.push(new OTLPTraceExporter());
    }
  }
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: 'svc', [ATTR_SERVICE_VERSION]: resource.version, 'svc.role': resource.role }).merge(
      detectResources({ detectors: [envDetector] }),
    ),
    spanProcessors: exporters.map((e) => new BatchSpanProcessor(e)),
  });
  provider.register();
  return { shutdown: () => provider.shutdown() };
}

/** OTEL_TRACES_EXPORTER as a list; `otlp` when only an endpoint was given. */
export function exporterNames(env: Readonly<Record<string, string | undefined>>): string[] {
  return (env.OTEL_TRACES_EXPORTER || 'otlp')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}
