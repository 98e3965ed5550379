import { Hono, type Context } from 'hono';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { mcpToolIdentity } from '../../../contracts/permissions.ts';
import { mcpEventToolName, type McpServerSpec } from '../../../contracts/worker.ts';
import type { SessionRecord } from '../sessions/sessions.store.ts';
import type { Approvals } from '../approvals/index.ts';
import { gate } from '../toolkit/gate.ts';
import type { RemoteMcpHost } from './remote-mcp.ts';
import type { RunnerEnv } from '../runner.context.ts';
import type { SessionStore } from '../sessions/sessions.store.ts';
import type { Toolkit } from '../toolkit/toolkit.service.ts';

/** The MCP SDK's server side, imported on the first MCP request (a runner that serves none does not load it). */
let sdk: Promise<[typeof import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'), typeof import('./session-mcp.ts')]> | undefined;
const loadSdk = () => (sdk ??= Promise.all([import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'), import('./session-mcp.ts')]));
import { SESSION_TOKEN_PARAM, type SessionTokens } from './session-token.ts';
import { unauthorized } from '../../../shared/errors.ts';
import { extractTrace } from '../../../shared/tracing/index.ts';
import type { WorkerTokens } from '../workers/sandbox/worker-token.ts';
import type { StdioMcpHost } from './stdio-mcp.ts';

/**
 * `POST, GET, DELETE /runner/sessions/{id}/mcp`: the session's streamable-HTTP MCP endpoint (RUNTIMES.md §5, SDK
 * web-standard transport). Stateless JSON mode: a fresh server and transport per request, so there is no MCP session
 * to leak and a deleted runner session is closed at once (404). Without MCP sessions there is no server-initiated
 * stream: GET answers 405, which the MCP spec allows and clients expect; DELETE is accepted and ends nothing.
 *
 * Every request carries the session's token (`?svc_worker_token=`, minted into the `sessionMcpUrl` of each run of
 * this session; session-token.ts): without it, or with another session's, the answer is 401 before the session is
 * even looked up, so the endpoint tells nothing about which sessions exist. The worker calls without a tenant
 * header; the token names the session.
 */
export function mcpRoutes(deps: {
  sessions: SessionStore;
  toolkit: Toolkit;
  tokens: SessionTokens;
  workerTokens: WorkerTokens;
  version: string;
  closing: AbortSignal;
  stdio?: StdioMcpHost;
  /** The run's HTTP and SSE MCP servers this runner fronts (remote-mcp.ts). */
  remote?: RemoteMcpHost;
  /** Where a fronted server's call under an `ask` policy waits for a person. */
  approvals?: Approvals;
}): Hono<RunnerEnv> {
  const app = new Hono<RunnerEnv>();
  const refused = () => unauthorized(`invalid or missing worker token: the session MCP endpoint needs its session's ${SESSION_TOKEN_PARAM}`);

  /**
   * The live session a request of the session's MCP endpoints is for, or undefined when there is none (404): a
   * sandbox session's worker holds a signed worker token (its tenant and session), a sidecar's run a session token.
   * A wrong or missing token is 401 before the session is even looked up.
   */
  async function authorized(id: string, token: string | undefined): Promise<SessionRecord | undefined> {
    const claims = deps.tokens.verify(id, token) ? undefined : await deps.workerTokens.verify('svc-mcp', token, { sessionId: id }).catch(() => {
      throw refused();
    });
    const session = deps.sessions.findLive(id);
    if (session && (session.profile.workerMode === 'sandbox') !== (claims !== undefined)) throw refused();
    if (session && claims && claims.tenant !== session.tenant) throw refused();
    return session;
  }

  const stateless = (c: Context<RunnerEnv>) =>
    c.json({ jsonrpc: '2.0', error: { code: -32000, message: 'this endpoint is stateless and offers no server-initiated stream' }, id: null }, 405, { Allow: 'POST, DELETE' });

  /**
   * A stateless streamable-HTTP MCP server relaying to `upstream` (a stdio server the run started, or an HTTP or SSE
   * server the runner fronts), each `tools/call` through the permission gate under `mcp:<server>/<tool>` (svc's own
   * function-tool endpoint's aside).
   */
  async function relay(c: Context<RunnerEnv>, session: SessionRecord, spec: McpServerSpec, upstream: () => Promise<Client>, callTimeoutMs: number): Promise<Response> {
    const [{ WebStandardStreamableHTTPServerTransport }] = await loadSdk();
    const { Server } = await import('@modelcontextprotocol/sdk/server/index.js');
    const { CallToolRequestSchema, ListToolsRequestSchema } = await import('@modelcontextprotocol/sdk/types.js');
    const server = new Server({ name: `svc-relay-${spec.name}`, version: deps.version }, { capabilities: { tools: {} } });
    const closing = AbortSignal.any([c.req.raw.signal, deps.closing]);
    server.setRequestHandler(ListToolsRequestSchema, async (req, extra) => (await upstream()).listTools(req.params, { signal: extra.signal }));
    server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
      const signal = AbortSignal.any([extra.signal, closing]);
      const tool = req.params.name;
      // svc's own endpoint (the function tools, which the client answers) is no tenant's server: no policy names it
      const gated = spec.platform ? { allowed: true as const, input: req.params.arguments } : await gate(deps.approvals, session, { identity: mcpToolIdentity(spec.name, tool), name: mcpEventToolName(spec, tool), input: req.params.arguments ?? {} }, signal);
      if (!gated.allowed) return { content: [{ type: 'text', text: gated.error }], isError: true };
      const args = (gated.input ?? {}) as Record<string, unknown>;
      return (await upstream()).callTool({ ...req.params, arguments: args }, undefined, { signal, timeout: callTimeoutMs }) as never;
    });
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      return await transport.handleRequest(c.req.raw);
    } finally {
      await server.close();
    }
  }

  /**
   * `/runner/sessions/{id}/mcp/server/{name}`: an HTTP or SSE MCP server of the session's current run (its profile's,
   * or the run's own), fronted by this runner (remote-mcp.ts) so the permission gate sees its calls; or the conductor's
   * function-tool endpoint, which this runner calls with the run's token of the moment.
   */
  app.all('/runner/sessions/:id/mcp/server/:name', async (c) => {
    const id = c.req.param('id');
    const session = await authorized(id, c.req.query(SESSION_TOKEN_PARAM));
    const server = session ? deps.remote?.find(id, c.req.param('name')) : undefined;
    if (!session || !server) return c.json({ jsonrpc: '2.0', error: { code: -32001, message: `no MCP server ${c.req.param('name')} is fronted for session ${id}` }, id: null }, 404);
    if (c.req.method === 'GET') return stateless(c);
    return relay(c, session, server.spec, () => server.client(), server.callTimeoutMs);
  });

  /**
   * `/runner/sessions/{id}/mcp/stdio/{name}`: a stdio MCP server the session's current run started in its sandbox
   * (stdio-mcp.ts), relayed as a stateless streamable-HTTP MCP server under the same token rules.
   */
  app.all('/runner/sessions/:id/mcp/stdio/:name', async (c) => {
    const id = c.req.param('id');
    const session = await authorized(id, c.req.query(SESSION_TOKEN_PARAM));
    const server = session ? deps.stdio?.find(id, c.req.param('name')) : undefined;
    if (!session || !server) return c.json({ jsonrpc: '2.0', error: { code: -32001, message: `no stdio MCP server ${c.req.param('name')} runs for session ${id}` }, id: null }, 404);
    if (c.req.method === 'GET') return stateless(c);
    return relay(c, session, { name: server.name, transport: 'stdio' }, async () => server.client, 3_600_000);
  });

  app.all('/runner/sessions/:id/mcp', async (c) => {
    const id = c.req.param('id');
    const session = await authorized(id, c.req.query(SESSION_TOKEN_PARAM));
    if (!session) return c.json({ jsonrpc: '2.0', error: { code: -32001, message: `unknown session: ${c.req.param('id')}` }, id: null }, 404);
    if (c.req.method === 'GET') return stateless(c);
    const [{ WebStandardStreamableHTTPServerTransport }, { sessionMcpServer }] = await loadSdk();
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    const signal = AbortSignal.any([c.req.raw.signal, deps.closing]);
    const server = sessionMcpServer({ session, toolkit: deps.toolkit, version: deps.version, signal, trace: extractTrace(c.req.raw.headers) });
    await server.connect(transport);
    try {
      return await transport.handleRequest(c.req.raw);
    } finally {
      // in JSON mode the response is complete here; closing frees the per-request server
      await server.close();
    }
  });

  return app;
}
