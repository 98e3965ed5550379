import { Hono } from 'hono';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { z } from 'zod';
import { listen } from './listen.ts';
import { listenTls, type TestCert } from './tls.ts';

/**
 * A tiny real MCP server for tests (RUNTIMES.md §5: SDK web-standard transport in Hono, stateless JSON): an `echo`
 * tool answering `echo: <message>`, a `fail` tool answering an MCP error result, and `extraTools` filler tools
 * `tool_<i>` for catalog-size tests. Every tool call is logged.
 */
export interface TestMcpServer {
  /** The MCP endpoint (`…/mcp`). */
  url: string;
  calls: Array<{ name: string; args: unknown }>;
  /** The `authorization` header of every request that carried one (header-forwarding tests). */
  authorizations: string[];
  /** The `x-*` headers of every request (static headers a client was configured with). */
  extraHeaders: Array<Record<string, string>>;
  /** The JSON-RPC method of every request, in order (`initialize`, `tools/list`, `tools/call`, …). */
  methods: string[];
  close(): Promise<void>;
}

/**
 * `sessionToken`: like the runner's session endpoint, answer 401 unless the URL carries `?svc_worker_token=<it>`
 * (`url` then includes it), so a test proves a client keeps the query string of the URL it is given.
 */
/**
 * `tls`: serve HTTPS with this certificate. `bearer`: answer 401 (with `WWW-Authenticate: Bearer`) to a request whose
 * `Authorization` is not `Bearer <bearer()>`, as an MCP server behind OAuth does.
 */
export async function startMcpServer(opts: { name?: string; extraTools?: number; sessionToken?: string; tls?: TestCert; bearer?: () => string } = {}): Promise<TestMcpServer> {
  const calls: TestMcpServer['calls'] = [];
  const authorizations: string[] = [];
  const extraHeaders: Array<Record<string, string>> = [];
  const methods: string[] = [];
  const build = () => {
    const server = new McpServer({ name: opts.name ?? 'test-mcp', version: '1.0.0' });
    server.registerTool('echo', { description: 'Echo a message back', inputSchema: { message: z.string() } }, async ({ message }) => {
      calls.push({ name: 'echo', args: { message } });
      return { content: [{ type: 'text', text: `echo: ${message}` }] };
    });
    server.registerTool('fail', { description: 'Always fails', inputSchema: {} }, async () => {
      calls.push({ name: 'fail', args: {} });
      return { content: [{ type: 'text', text: 'this tool always fails' }], isError: true };
    });
    for (let i = 0; i < (opts.extraTools ?? 0); i++) {
      server.registerTool(`tool_${i}`, { description: `Filler tool number ${i}`, inputSchema: { n: z.number().optional() } }, async (args) => {
        calls.push({ name: `tool_${i}`, args });
        return { content: [{ type: 'text', text: `tool_${i} ran` }] };
      });
    }
    return server;
  };
  const app = new Hono();
  app.all('/mcp', async (c) => {
    if (opts.sessionToken && c.req.query('svc_worker_token') !== opts.sessionToken) return c.json({ error: 'invalid or missing worker token' }, 401);
    const authorization = c.req.header('authorization');
    if (authorization) authorizations.push(authorization);
    extraHeaders.push(Object.fromEntries([...c.req.raw.headers].filter(([k]) => k.startsWith('x-'))));
    if (opts.bearer && authorization !== `Bearer ${opts.bearer()}`) return c.json({ error: 'invalid_token' }, 401, { 'WWW-Authenticate': 'Bearer error="invalid_token"' });
    if (c.req.method === 'POST') {
      const body = (await c.req.raw.clone().json().catch(() => undefined)) as { method?: string } | Array<{ method?: string }> | undefined;
      for (const m of Array.isArray(body) ? body : body ? [body] : []) if (m.method) methods.push(m.method);
    }
    // Stateless: a fresh server and transport per request.
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await build().connect(transport);
    return transport.handleRequest(c.req.raw);
  });
  const http = opts.tls ? await listenTls(app.fetch, opts.tls) : await listen(app.fetch);
  const query = opts.sessionToken ? `?svc_worker_token=${encodeURIComponent(opts.sessionToken)}` : '';
  return { url: `${http.url}/mcp${query}`, calls, authorizations, extraHeaders, methods, close: http.close };
}
