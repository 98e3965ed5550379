import type * as Api from '@opentelemetry/api';

/**
 * Traces of the run path. Off and free unless the OTEL_* variables ask for export (config.ts `otel`): until
 * `startTracing` runs, nothing of OpenTelemetry is imported (not even the API), spans are a shared no-op, and inject,
 * extract and bind do nothing. `startTracing` imports the API and the SDK (sdk.ts) and registers the SDK globally, so
 * the API calls of our code, the AI SDK's integration and pg-boss all land in it. Spans cross processes as W3C
 * `traceparent` headers on the internal calls (conductor → runner → worker → the runner's session MCP endpoint).
 */
export type Span = Api.Span;
/** A trace context; undefined while tracing is off. */
export type TraceContext = Api.Context | undefined;

/** The API's SpanKind values (a const here: the API itself is not imported while tracing is off). */
export const SpanKind = { INTERNAL: 0, SERVER: 1, CLIENT: 2 } as const satisfies Record<string, Api.SpanKind>;

export interface Tracing {
  /** Flushes spans still buffered and stops exporting. */
  shutdown(): Promise<void>;
}

let api: typeof Api | undefined;
let started: Promise<Tracing> | undefined;

/** Loads the API and the SDK (sdk.ts) and registers the SDK globally; until shut down, later calls return the first start. */
export function startTracing(otelEnv: Readonly<Record<string, string>>, resource: { role: string; version: string }): Promise<Tracing> {
  started ??= (async () => {
    const [loaded, sdk] = await Promise.all([import('@opentelemetry/api'), import('./sdk.ts')]);
    const tracing = await sdk.startSdk(otelEnv, resource);
    api = loaded;
    return {
      async shutdown() {
        await tracing.shutdown();
        // unregistered, so a later instance in this process (the library's startSvc) can start tracing afresh
        loaded.trace.disable();
        loaded.propagation.disable();
        loaded.context.disable();
        api = undefined;
        started = undefined;
      },
    };
  })();
  return started;
}

/** Whether this process exports traces (the SDK is started). */
export const tracingOn = (): boolean => api !== undefined;

const noop: Span = {
  spanContext: () => ({ traceId: '00000000000000000000000000000000', spanId: '0000000000000000', traceFlags: 0 }),
  setAttribute: () => noop,
  setAttributes: () => noop,
  addEvent: () => noop,
  addLink: () => noop,
  addLinks: () => noop,
  setStatus: () => noop,
  updateName: () => noop,
  end: () => {},
  isRecording: () => false,
  recordException: () => {},
};

/** Starts a span under `parent` (default: the active context); the shared no-op span while tracing is off. */
export function startSpan(name: string, opts: { parent?: TraceContext; kind?: Api.SpanKind; attributes?: Api.Attributes } = {}): Span {
  if (!api) return noop;
  return api.trace.getTracer('svc').startSpan(name, { kind: opts.kind ?? SpanKind.INTERNAL, attributes: opts.attributes }, opts.parent ?? api.context.active());
}

/** The context with `span` active, under `parent` (default: the active context). */
export function contextWith(span: Span, parent?: TraceContext): TraceContext {
  return api ? api.trace.setSpan(parent ?? api.context.active(), span) : undefined;
}

/** Runs `fn` with `ctx` active: calls it makes inject this trace, spans it starts are its children. */
export function runIn<T>(ctx: TraceContext, fn: () => T): T {
  return api && ctx ? api.context.with(ctx, fn) : fn();
}

/** Ends `span`, marked as an error with `error` as its message when given. */
export function endSpan(span: Span, error?: string): void {
  if (error !== undefined) span.setStatus({ code: 2 /* SpanStatusCode.ERROR */, message: error });
  span.end();
}

const headersSetter: Api.TextMapSetter<Headers | Record<string, string>> = {
  set: (carrier, key, value) => (carrier instanceof Headers ? carrier.set(key, value) : void (carrier[key] = value)),
};
const headersGetter: Api.TextMapGetter<Headers> = {
  get: (carrier, key) => carrier.get(key) ?? undefined,
  keys: (carrier) => [...carrier.keys()],
};

/** Writes `traceparent` (and `tracestate`) of `ctx` (default: the active context) into outgoing headers. */
export function injectTrace(headers: Headers | Record<string, string>, ctx?: TraceContext): void {
  if (api) api.propagation.inject(ctx ?? api.context.active(), headers, headersSetter);
}

/** The caller's trace from an incoming request's `traceparent` (a fresh root when it has none). */
export function extractTrace(headers: Headers): TraceContext {
  return api ? api.propagation.extract(api.ROOT_CONTEXT, headers, headersGetter) : undefined;
}

/** The active context: what a direct call between roles of one process hands its callee as the caller's trace. */
export function activeTrace(): TraceContext {
  return api ? api.context.active() : undefined;
}

/** The active context's `traceparent` value, for child processes that read it from TRACEPARENT. */
export function currentTraceparent(): string | undefined {
  const carrier: Record<string, string> = {};
  injectTrace(carrier);
  return carrier.traceparent;
}

/**
 * The iterable with every step of it run under `ctx`: a generator's body runs in the context of whoever calls
 * `next()`, so a stream drained by an HTTP response writer would otherwise lose the run's span.
 */
export function bindIterable<T>(ctx: TraceContext, iterable: AsyncIterable<T>): AsyncIterable<T> {
  const a = api;
  if (!a || !ctx) return iterable;
  return {
    [Symbol.asyncIterator]() {
      const it = iterable[Symbol.asyncIterator]();
      return {
        next: (...args: [] | [unknown]) => a.context.with(ctx, () => it.next(...args)),
        return: it.return ? (value?: unknown) => a.context.with(ctx, () => it.return!(value)) : undefined,
        throw: it.throw ? (err?: unknown) => a.context.with(ctx, () => it.throw!(err)) : undefined,
      } as AsyncIterator<T>;
    },
  };
}

/** `trace_id` and `span_id` of the active span, for log lines; undefined when there is none (or tracing is off). */
export function traceFacts(): { trace_id: string; span_id: string } | undefined {
  const span = api?.trace.getActiveSpan();
  if (!span) return undefined;
  const sc = span.spanContext();
  if (!api!.trace.isSpanContextValid(sc)) return undefined;
  return { trace_id: sc.traceId, span_id: sc.spanId };
}
