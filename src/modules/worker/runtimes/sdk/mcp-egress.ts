import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { createParser } from 'eventsource-parser';
import { createGuardedFetch, type GuardedFetch, type PrivateAddresses } from '../../../../shared/egress/index.ts';
import { describeError } from '../../../../shared/errors.ts';
import { encodeSseComment, encodeSseFrame } from '../../../../shared/sse.ts';
import type { McpServerEntry } from './mcp.ts';

/**
 * Claude Code and Codex connect to MCP servers themselves, with HTTP clients that take no custom fetch. Under
 * SVC_PRIVATE_ADDRESSES=deny a tenant's server is therefore handed to them as a forwarder of this worker on
 * 127.0.0.1: each request keeps its method, path, query, headers and body, and goes to the server's origin through
 * the guarded fetcher, so its connection is checked against the address policy where it is made (a refusal answers
 * 502 with the reason, as a JSON-RPC error). Keeping the path means an SSE server's `endpoint` (where its client
 * posts) lands on the forwarder too; one naming a full URL is rewritten to its path, or, on another origin, to a path
 * the forwarder refuses. The forwarders live as long as the run.
 */
export interface ForwardedServers {
  servers: McpServerEntry[];
  close(): Promise<void>;
}

/** Hop-by-hop headers, and those that describe a body fetch re-encodes (it decompresses, and recounts). */
const NOT_FORWARDED = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'host', 'content-length', 'content-encoding']);

let sharedDeny: GuardedFetch | undefined;

/** Where an SSE server's endpoint on another origin is sent instead: the forwarder refuses it. */
const OTHER_ORIGIN = '/.svc-egress/endpoint-on-another-origin';

const refuse = (res: ServerResponse, message: string) =>
  res.writeHead(502, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));

/** An event stream with each `endpoint` event kept on the forwarder (the legacy SSE transport's message URL). */
function endpointsKept(body: ReadableStream<Uint8Array>, target: URL): ReadableStream<Uint8Array> {
  const decoder = new TextDecoder();
  let out!: TransformStreamDefaultController<Uint8Array>;
  const parser = createParser({
    onEvent(e) {
      let data = e.data;
      if (e.event === 'endpoint') {
        const at = new URL(e.data, target);
        data = at.origin === target.origin ? `${at.pathname}${at.search}` : OTHER_ORIGIN;
      }
      out.enqueue(encodeSseFrame({ event: e.event, data, id: e.id }));
    },
    onComment: (comment) => out.enqueue(encodeSseComment(comment.trim())),
  });
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      start: (controller) => void (out = controller),
      transform: (chunk) => parser.feed(decoder.decode(chunk, { stream: true })),
    }),
  );
}

async function forward(target: URL, tenantFetch: GuardedFetch, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.url?.startsWith(OTHER_ORIGIN)) return void refuse(res, 'the MCP server named a message endpoint on another origin; it is not called');
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || NOT_FORWARDED.has(name)) continue;
    headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  const ac = new AbortController();
  res.on('close', () => ac.abort());
  const withBody = req.method !== 'GET' && req.method !== 'HEAD';
  try {
    const upstream = await tenantFetch(new URL(req.url ?? '/', target.origin), {
      method: req.method,
      headers,
      body: withBody ? (Readable.toWeb(req) as ReadableStream) : undefined,
      redirect: 'manual',
      signal: ac.signal,
      ...(withBody ? { duplex: 'half' } : {}),
    } as RequestInit);
    const out: Record<string, string> = {};
    upstream.headers.forEach((value, name) => {
      if (!NOT_FORWARDED.has(name)) out[name] = value;
    });
    res.writeHead(upstream.status, out);
    if (!upstream.body) return void res.end();
    const events = upstream.headers.get('content-type')?.startsWith('text/event-stream');
    Readable.fromWeb((events ? endpointsKept(upstream.body as ReadableStream<Uint8Array>, target) : upstream.body) as never)
      .on('error', () => res.destroy())
      .pipe(res);
  } catch (err) {
    if (res.headersSent) return void res.destroy();
    refuse(res, describeError(err));
  }
}

function listenLoopback(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer(handler);
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

/**
 * The run's MCP servers as Claude Code or Codex should get them: under `deny` each tenant server (not the session
 * toolkit, not svc's own) behind a forwarder of its own; under `allow` unchanged. `tenantFetch`: tests pass one.
 */
export async function forwardTenantServers(servers: readonly McpServerEntry[], policy: PrivateAddresses | undefined, tenantFetch?: GuardedFetch): Promise<ForwardedServers> {
  if (policy !== 'deny' && !tenantFetch) return { servers: [...servers], close: async () => {} };
  const via = tenantFetch ?? (sharedDeny ??= createGuardedFetch({ privateAddresses: 'deny' }));
  const listening: Server[] = [];
  const close = async () => {
    await Promise.all(listening.map((s) => new Promise<void>((resolve) => (s.closeAllConnections(), s.close(() => resolve())))));
  };
  try {
    const out: McpServerEntry[] = [];
    for (const s of servers) {
      if (!s.tenant) {
        out.push(s);
        continue;
      }
      const target = new URL(s.url);
      const server = await listenLoopback((req, res) => void forward(target, via, req, res));
      listening.push(server);
      const local = new URL(s.url);
      local.protocol = 'http:';
      local.host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
      local.username = '';
      local.password = '';
      out.push({ ...s, url: local.href });
    }
    return { servers: out, close };
  } catch (err) {
    await close();
    throw err;
  }
}
