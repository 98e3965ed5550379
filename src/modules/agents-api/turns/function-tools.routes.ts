import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Hono } from 'hono';
import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { withTenant } from '../../../db/index.ts';
import { conflict, forbidden, notFound, undefinedIfNotFound } from '../../../shared/errors.ts';
import type { ConductorServices } from '../../conductor/index.ts';
import type { AgentsEnv } from '../context.ts';
import { getSessionRow } from '../sessions/sessions.repo.ts';
import type { TurnEngine } from './engine.ts';
import type { Subagents } from '../subagents/subagents.service.ts';
import { functionTools, subagentTools } from './launch.ts';
import { runDepth } from '../subagents/subagents.repo.ts';
import * as v from 'valibot';
import { doc } from '../../../shared/route-doc.ts';

/** A JSON-RPC 2.0 answer (the MCP wire): `result` for a request that worked, `error` for one that did not. */
const JsonRpcAnswer = v.object({
  jsonrpc: v.literal('2.0'),
  id: v.nullable(v.union([v.string(), v.number()])),
  result: v.optional(v.record(v.string(), v.unknown())),
  error: v.optional(v.object({ code: v.number(), message: v.string(), data: v.optional(v.unknown()) })),
});

const DOC = doc({
  summary: "Serve a session's function tools over MCP",
  description:
    "The streamable-HTTP MCP endpoint (stateless, JSON answers) through which a session's runs call the agent's `function` tools, each call answered by the client's `tool_result`; the subagent tools of a multi-agent session are served here too. Only the run tokens of the session's runs (and its subagents') may call it, and only while that run is running (409 once it ended).",
  response: JsonRpcAnswer,
  errors: [403, 409],
});

/** The MCP SDK's server side, imported on the first function-tool request (most servers never serve one). */
let sdk:
  | Promise<[typeof import('@modelcontextprotocol/sdk/server/mcp.js'), typeof import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'), typeof import('@modelcontextprotocol/sdk/types.js')]>
  | undefined;
const loadSdk = () =>
  (sdk ??= Promise.all([import('@modelcontextprotocol/sdk/server/mcp.js'), import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'), import('@modelcontextprotocol/sdk/types.js')]));

/**
 * `/api/agent-sessions/{id}/function-tools/mcp`: the streamable-HTTP MCP endpoint that puts an agent's `function`
 * tools in front of the model. The runner of a turn's run calls it for the worker with that run's token of the moment,
 * renewed while the run lasts (the conductor's `/api` middleware authenticates it; runner mcp/remote-mcp.ts), and it
 * serves the run while it is running only: a token that leaks opens the endpoint no longer than its run lasts. A
 * call is handed to the turn engine, which announces it to the client and answers the model with the client's
 * `tool_result`. A `multi_agent` agent's subagent tools are served here too (the subagents service runs them). The
 * runs of the session's subagents use it too: the same function tools, and the subagent tools while they are less
 * than MAX_SUBAGENT_DEPTH deep. Stateless JSON mode, one server per request, as the runner's endpoint.
 */
export function functionToolRoutes(deps: { db: Kysely<DB>; conductor: ConductorServices; engine: TurnEngine; subagents: Subagents; version: string }): Hono<AgentsEnv> {
  return new Hono<AgentsEnv>().all('/agent-sessions/:id/function-tools/mcp', DOC, async (c) => {
    const principal = c.get('principal');
    const runId = principal.authKind === 'run_token' && principal.subject?.startsWith('run:') ? principal.subject.slice(4) : undefined;
    if (!runId) throw forbidden('function tools are served to the runs of a session only');
    const sessionId = c.req.param('id');
    const row = await withTenant(deps.db, principal.tenantId, (tx) => getSessionRow(tx, sessionId));
    const run = await deps.conductor.runs.get(principal.tenantId, runId).catch(undefinedIfNotFound);
    // a run token opens the function tools of its own session only: a run of the session, or of one of its subagents
    const depth = row && run ? await withTenant(deps.db, principal.tenantId, (tx) => runDepth(tx, sessionId, run.subTask.sessionId as string | undefined)) : undefined;
    if (!row || depth === undefined) throw notFound(`unknown session: ${sessionId}`);
    // a running run's only (`waiting`: another of its calls waits for approval): an ended run's token opens nothing
    if (run!.status !== 'running' && run!.status !== 'waiting') throw conflict(`run ${runId} is ${run!.status}, not running: its function tools are not served`);
    if (c.req.method === 'GET') {
      return c.json({ jsonrpc: '2.0', error: { code: -32000, message: 'this endpoint is stateless and offers no server-initiated stream' }, id: null }, 405, { Allow: 'POST, DELETE' });
    }
    const subagentNames = new Set(subagentTools(row.agent).map((t) => t.name));
    const tools = [...functionTools(row.agent).filter((t) => !subagentNames.has(t.name)), ...subagentTools(row.agent, depth)];
    const [{ McpServer }, { WebStandardStreamableHTTPServerTransport }, { CallToolRequestSchema, ListToolsRequestSchema }] = await loadSdk();
    const server = new McpServer({ name: 'svc-function-tools', version: deps.version }, { capabilities: { tools: {} } });
    server.server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: tools.map((t) => ({ name: t.name, description: t.description, inputSchema: { type: 'object' as const, properties: {}, ...t.parameters } })),
    }));
    server.server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
      const name = request.params.name;
      if (!tools.some((t) => t.name === name)) return { content: [{ type: 'text', text: `unknown function ${name}` }], isError: true };
      const signal = AbortSignal.any([extra.signal, c.req.raw.signal]);
      if (subagentNames.has(name)) {
        const args = (request.params.arguments ?? {}) as Record<string, unknown>;
        const { text, isError } = await deps.subagents.call(principal.tenantId, sessionId, runId, name, args, signal);
        return { content: [{ type: 'text', text }], isError };
      }
      const { text, isError } = await deps.engine.callFunction(principal.tenantId, sessionId, runId, name, request.params.arguments ?? {}, signal);
      return { content: [{ type: 'text', text }], isError };
    });
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      return await transport.handleRequest(c.req.raw);
    } finally {
      await server.close();
    }
  });
}
