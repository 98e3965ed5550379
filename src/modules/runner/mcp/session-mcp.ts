import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { describeError, isAppError } from '../../../shared/errors.ts';
import { contextWith, endSpan, runIn, SpanKind, startSpan, type TraceContext } from '../../../shared/tracing/index.ts';
import type { SessionRecord } from '../sessions/sessions.store.ts';
import type { ToolResult } from '../../../contracts/runner.wire.ts';
import type { ToolDef } from '../toolkit/tool.ts';
import type { Toolkit } from '../toolkit/toolkit.service.ts';

/**
 * The MCP server of one session: `tools/list` answers exactly the profile's scoped toolkit, `tools/call` goes through
 * the same invoke path as `POST …/toolkit/invoke`. Refusals (out of scope, unknown tool) and tool failures are MCP
 * error results (`isError: true`) the model can read, not protocol errors that would end its turn.
 *
 * The low-level handlers on `McpServer.server` are used instead of `registerTool` because our tools publish JSON
 * Schema as is, and a tool outside the scope must be refused by name rather than reported as "not found".
 */
export const MCP_SERVER_NAME = 'svc-session-toolkit';

function textOf(def: ToolDef, value: unknown): string {
  if (def.text) {
    try {
      return def.text(value as never);
    } catch {
      // a formatter that does not fit the value falls back to JSON
    }
  }
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}

const refusal = (text: string): CallToolResult => ({ content: [{ type: 'text', text }], isError: true });

/** A toolkit call's result as MCP answers it (also what a resumed parked call answers, runs/runs.service.ts). */
export function toCallToolResult(def: ToolDef, result: ToolResult): CallToolResult {
  const value = result.value;
  const structured = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  const text = result.ok ? textOf(def, value) : String((value as { error?: unknown })?.error ?? 'tool failed');
  return { content: [{ type: 'text', text }], ...(structured ? { structuredContent: structured } : {}), isError: !result.ok };
}

/** The failure of a call that did not run (a denied approval), as MCP answers it. */
export const failedCallResult = refusal;

/**
 * One JSON Schema validator for every per-request server: left to itself each `McpServer` builds its own Ajv instance
 * (with formats), about a sixth of the runner's CPU per run in `npm run bench`. The validator only caches compiled
 * schemas (and this server never uses it: it serves tools, it does not elicit).
 */
let validator: AjvJsonSchemaValidator | undefined;

export function sessionMcpServer(opts: { session: SessionRecord; toolkit: Toolkit; version: string; signal: AbortSignal; trace?: TraceContext }): McpServer {
  const { session, toolkit } = opts;
  const mcp = new McpServer({ name: MCP_SERVER_NAME, version: opts.version }, { capabilities: { tools: {} }, jsonSchemaValidator: (validator ??= new AjvJsonSchemaValidator()) });

  mcp.server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: (await toolkit.scopedSpecs(session)).map((spec) => ({ name: spec.name, description: spec.description, inputSchema: spec.inputSchema as { type: 'object' } })),
  }));

  mcp.server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    // the worker's tool-call span (its `traceparent` on this request) continues here, around the tool's own work
    const span = startSpan(`svc.runner.tool ${request.params.name}`, {
      parent: opts.trace,
      kind: SpanKind.SERVER,
      attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': request.params.name, 'svc.session.id': session.id },
    });
    let failure: string | undefined;
    try {
      const result = await runIn(contextWith(span, opts.trace), () => callTool(request.params.name, request.params.arguments ?? {}, extra.signal));
      if (result.isError) failure = 'tool failed';
      return result;
    } catch (err) {
      failure = describeError(err);
      throw err;
    } finally {
      endSpan(span, failure);
    }
  });

  async function callTool(name: string, args: Record<string, unknown>, requestSignal: AbortSignal): Promise<CallToolResult> {
    try {
      const signal = AbortSignal.any([requestSignal, opts.signal]);
      const { def, result } = await toolkit.invoke(session, name, args, signal);
      return toCallToolResult(def, result);
    } catch (err) {
      // 403 (out of scope) and 404 (unknown tool) from the toolkit: the same words as the HTTP surface
      if (isAppError(err)) return refusal(err.message);
      throw err;
    }
  }

  return mcp;
}
