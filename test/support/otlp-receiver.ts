import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A minimal OTLP/HTTP trace receiver (what a collector is to svc): `POST /v1/traces` with an ExportTraceServiceRequest
 * in JSON (OTEL_EXPORTER_OTLP_PROTOCOL=http/json) is decoded into spans; protobuf requests are counted, not decoded.
 */
type AnyValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean; arrayValue?: { values: AnyValue[] } };
interface KeyValue {
  key: string;
  value: AnyValue;
}
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: KeyValue[];
}
export interface ReceivedSpan {
  /** The exporting process's resource: service.name and svc.role. */
  service: string;
  role: string;
  span: OtlpSpan;
}

const valueOf = (v: AnyValue | undefined): unknown =>
  v === undefined ? undefined : v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : v.doubleValue ?? v.boolValue ?? v.arrayValue?.values.map(valueOf));

/** An attribute's value (numbers as numbers, arrays as arrays). */
export const attr = (span: OtlpSpan, key: string): unknown => valueOf(span.attributes?.find((a) => a.key === key)?.value);

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  requests(): number;
  contentTypes: string[];
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  let requests = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      requests++;
      contentTypes.push(String(req.headers['content-type']));
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      if (req.headers['content-type'] === 'application/x-protobuf') {
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(); // counted, not decoded
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { resourceSpans: Array<{ resource: { attributes: KeyValue[] }; scopeSpans: Array<{ spans: OtlpSpan[] }> }> };
      for (const rs of body.resourceSpans) {
        const resource = { attributes: rs.resource.attributes } as OtlpSpan;
        for (const ss of rs.scopeSpans) for (const span of ss.spans) spans.push({ service: String(attr(resource, 'service.name')), role: String(attr(resource, 'svc.role')), span });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    requests: () => requests,
    contentTypes,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
