import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { Hono } from 'hono';
import type { RunnerEnv } from '../runner.context.ts';
import type { SessionStore } from '../sessions/sessions.store.ts';
import type { Toolkit } from '../toolkit/toolkit.service.ts';
import { sessionMcpServer } from './session-mcp.ts';

/**
 * `POST, GET, DELETE /runner/sessions/{id}/mcp`: the session's streamable-HTTP MCP endpoint (RUNTIMES.md §5, SDK
 * web-standard transport). Stateless JSON mode: a fresh server and transport per request, so there is no MCP session
 * to leak and a deleted runner session is closed at once (404). Without MCP sessions there is no server-initiated
 * stream: GET answers 405, which the MCP spec allows and clients expect; DELETE is accepted and ends nothing.
 *
 * The worker calls this without a tenant header, so the session is looked up by id across tenants; the id itself
 * (random, embedded in the worker's run body) is what names it.
 */
export function mcpRoutes(deps: { sessions: SessionStore; toolkit: Toolkit; version: string; closing: AbortSignal }): Hono<RunnerEnv> {
  const app = new Hono<RunnerEnv>();

  app.all('/runner/sessions/:id/mcp', async (c) => {
    const session = deps.sessions.findLive(c.req.param('id'));
    if (!session) return c.json({ jsonrpc: '2.0', error: { code: -32001, message: `unknown session: ${c.req.param('id')}` }, id: null }, 404);
    if (c.req.method === 'GET') {
      return c.json({ jsonrpc: '2.0', error: { code: -32000, message: 'this endpoint is stateless and offers no server-initiated stream' }, id: null }, 405, { Allow: 'POST, DELETE' });
    }
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    const signal = AbortSignal.any([c.req.raw.signal, deps.closing]);
    const server = sessionMcpServer({ session, toolkit: deps.toolkit, version: deps.version, signal });
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
