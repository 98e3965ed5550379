import type { TelemetryOptions } from 'ai';
import { injectTrace, tracingOn } from '../../../../shared/tracing/index.ts';

/**
 * The AI SDK's side of a run's trace: when this process exports traces, streamText gets the `@ai-sdk/otel`
 * integration (GenAI semantic conventions: an `invoke_agent` span, a `chat <model>` span per model call with
 * gen_ai.request.model, gen_ai.provider.name, gen_ai.usage.input_tokens/output_tokens and
 * gen_ai.response.finish_reasons, an `execute_tool <name>` span per tool call), parented on the worker's run span.
 * Prompts and outputs are recorded only when OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT is `true` (the GenAI
 * conventions' switch). Without tracing nothing is imported and streamText gets no telemetry.
 */
let integration: Promise<NonNullable<TelemetryOptions['integrations']>> | undefined;

export async function aiTelemetry(otel: Readonly<Record<string, string>> | undefined): Promise<TelemetryOptions | undefined> {
  if (!tracingOn()) return undefined;
  integration ??= Promise.all([import('@ai-sdk/otel'), import('@opentelemetry/api')]).then(([{ OpenTelemetry }, { trace }]) => new OpenTelemetry({ tracer: trace.getTracer('svc.ai') }));
  const capture = otel?.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT?.toLowerCase() === 'true';
  return { isEnabled: true, recordInputs: capture, recordOutputs: capture, functionId: 'svc.general', integrations: await integration };
}

/**
 * fetch for MCP transports: each request carries the active span's `traceparent` (a tool call's span, when the AI
 * SDK executes a tool), so the runner's session toolkit continues the run's trace. The connection may be kept across
 * runs (mcp-catalog.ts), which is why the header is set per request and not once per connection.
 */
export const tracedFetch: typeof fetch = (input, init) => {
  if (!tracingOn()) return fetch(input, init);
  const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
  injectTrace(headers);
  return fetch(input, { ...init, headers });
};
