import { dynamicTool, jsonSchema, type ToolSet } from 'ai';
import { runEvent, type CapabilitySpan, type RunEvent } from '../../../../contracts/run-event.ts';
import type { CatalogEntry } from './mcp-catalog.ts';
import { isMcpError, toModelOutput } from './model-output.ts';

export { isMcpError };

/**
 * Turns the run's tool catalog into the AI SDK tool set: the profile allowlist first, then either every tool
 * directly or, past `META_TOOL_THRESHOLD`, only the meta-tools `search_tools` and `call_tool` (a large catalog costs
 * tokens on every step and some providers cap the tool count). That dynamic loading is what the capability events
 * report (contracts/run-event.ts): the decision and the context it saves at the start, a span per `call_tool`.
 */
export const META_TOOL_THRESHOLD = 32;
const SEARCH_LIMIT = 10;

/**
 * Applies `profile.tools`: plain names form an allowlist. Selectors such as `@default` are resolved by the runner's
 * session toolkit, so a list holding only selectors filters nothing here.
 */
export function applyAllowlist(entries: readonly CatalogEntry[], tools: readonly string[] | undefined): CatalogEntry[] {
  const names = new Set((tools ?? []).filter((t) => !t.startsWith('@')));
  return names.size === 0 ? [...entries] : entries.filter((e) => names.has(e.name));
}

function direct(entry: CatalogEntry) {
  return dynamicTool({
    description: entry.description,
    inputSchema: jsonSchema(entry.inputSchema as Parameters<typeof jsonSchema>[0]),
    execute: (input, { abortSignal }) => entry.call((input ?? {}) as Record<string, unknown>, abortSignal),
    toModelOutput,
  });
}

/** Ranks catalog entries by how many query words appear in their name or description. */
export function searchCatalog(entries: readonly CatalogEntry[], query: string, limit = SEARCH_LIMIT): CatalogEntry[] {
  const words = query.toLowerCase().split(/[\s_,/-]+/).filter(Boolean);
  const scored = entries.map((entry) => {
    const hay = `${entry.name} ${entry.description}`.toLowerCase();
    return { entry, score: words.length === 0 ? 1 : words.filter((w) => hay.includes(w)).length };
  });
  return scored.filter((s) => s.score > 0).sort((a, b) => b.score - a.score).slice(0, limit).map((s) => s.entry);
}

const SEARCH_TOOLS = {
  description: (n: number) => `Search the ${n} available tools by keywords; returns names, descriptions and input schemas. Call one with call_tool.`,
  inputSchema: { type: 'object', properties: { query: { type: 'string', description: 'keywords' } }, required: ['query'] },
};
const CALL_TOOL = {
  description: 'Call a tool found with search_tools by its exact name, with arguments matching its input schema.',
  inputSchema: { type: 'object', properties: { name: { type: 'string' }, arguments: { type: 'object', additionalProperties: true } }, required: ['name'] },
};

function metaTools(entries: readonly CatalogEntry[], onSpan: (span: CapabilitySpan) => void): ToolSet {
  const byName = new Map(entries.map((e) => [e.name, e]));
  return {
    search_tools: dynamicTool({
      description: SEARCH_TOOLS.description(entries.length),
      inputSchema: jsonSchema(SEARCH_TOOLS.inputSchema as Parameters<typeof jsonSchema>[0]),
      execute: async (input) => {
        const query = String((input as { query?: unknown })?.query ?? '');
        const tools = searchCatalog(entries, query).map((e) => ({ name: e.name, description: e.description, inputSchema: e.inputSchema }));
        return { content: [{ type: 'text', text: JSON.stringify({ tools }) }], structuredContent: { tools } };
      },
      toModelOutput,
    }),
    call_tool: dynamicTool({
      description: CALL_TOOL.description,
      inputSchema: jsonSchema(CALL_TOOL.inputSchema as Parameters<typeof jsonSchema>[0]),
      execute: async (input, { abortSignal, toolCallId }) => {
        const { name, arguments: args } = (input ?? {}) as { name?: string; arguments?: Record<string, unknown> };
        const entry = name ? byName.get(name) : undefined;
        const startedAt = new Date();
        const span = (isError: boolean) =>
          onSpan({ toolCallId, tool: String(name ?? ''), found: entry !== undefined, startedAt: startedAt.toISOString(), durationMs: Date.now() - startedAt.getTime(), isError });
        if (!entry) {
          span(true);
          return { content: [{ type: 'text', text: `unknown tool "${name}"; use search_tools to find tool names` }], isError: true };
        }
        try {
          const output = await entry.call(args ?? {}, abortSignal);
          span(isMcpError(output));
          return output;
        } catch (err) {
          span(true);
          throw err;
        }
      },
      toModelOutput,
    }),
  };
}

/** A run's tools and what their loading reports. */
export interface ToolPlan {
  tools: ToolSet;
  /** `capability_decision` and `capability_context_savings` when the catalog is loaded dynamically; else none. */
  opening: RunEvent[];
  /** The `capability_span` of a `call_tool` that finished, taken once by its tool call id. */
  takeSpan(toolCallId: string): RunEvent | undefined;
}

const definitionBytes = (defs: ReadonlyArray<{ name: string; description: string; inputSchema: unknown }>) =>
  Buffer.byteLength(JSON.stringify(defs.map((d) => ({ name: d.name, description: d.description, inputSchema: d.inputSchema }))));

export function planTools(entries: readonly CatalogEntry[]): ToolPlan {
  if (entries.length <= META_TOOL_THRESHOLD) {
    return { tools: Object.fromEntries(entries.map((e) => [e.name, direct(e)])), opening: [], takeSpan: () => undefined };
  }
  const spans = new Map<string, CapabilitySpan>();
  const offered = [
    { name: 'search_tools', description: SEARCH_TOOLS.description(entries.length), inputSchema: SEARCH_TOOLS.inputSchema },
    { name: 'call_tool', description: CALL_TOOL.description, inputSchema: CALL_TOOL.inputSchema },
  ];
  const catalogSchemaBytes = definitionBytes(entries);
  const offeredSchemaBytes = definitionBytes(offered);
  const savedBytes = Math.max(0, catalogSchemaBytes - offeredSchemaBytes);
  return {
    tools: metaTools(entries, (span) => spans.set(span.toolCallId, span)),
    opening: [
      runEvent('capability_decision', {
        capability: {
          strategy: 'dynamic',
          reason: `the run has ${entries.length} tools, more than the ${META_TOOL_THRESHOLD} offered to the model directly: it finds and calls them through search_tools and call_tool`,
          catalogSize: entries.length,
          threshold: META_TOOL_THRESHOLD,
          offered: offered.map((o) => o.name),
        },
      }),
      runEvent('capability_context_savings', {
        capability: { catalogTools: entries.length, catalogSchemaBytes, offeredSchemaBytes, savedBytes, estimatedTokensSaved: Math.ceil(savedBytes / 4) },
      }),
    ],
    takeSpan(toolCallId) {
      const span = spans.get(toolCallId);
      if (!span) return undefined;
      spans.delete(toolCallId);
      return runEvent('capability_span', { toolCallId, toolName: 'call_tool', capability: span });
    },
  };
}

export function buildToolSet(entries: readonly CatalogEntry[]): ToolSet {
  return planTools(entries).tools;
}
