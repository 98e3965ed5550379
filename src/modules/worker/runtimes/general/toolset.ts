import { dynamicTool, jsonSchema, type ToolSet } from 'ai';
import type { CatalogEntry } from './mcp-catalog.ts';

/**
 * Turns the run's tool catalog into the AI SDK tool set: the profile allowlist first, then either every tool
 * directly or, past `META_TOOL_THRESHOLD`, only the meta-tools `search_tools` and `call_tool` (a large catalog costs
 * tokens on every step and some providers cap the tool count).
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

interface McpResultLike {
  content?: Array<{ type: string; text?: string }>;
  structuredContent?: unknown;
  isError?: boolean;
}

export function isMcpError(output: unknown): boolean {
  return !!output && typeof output === 'object' && (output as McpResultLike).isError === true;
}

/** What the model reads back: the text parts of an MCP result (other parts as JSON), flagged as an error if it is one. */
function toModelOutput({ output }: { output: unknown }) {
  const result = (output ?? {}) as McpResultLike;
  const parts = Array.isArray(result.content) ? result.content : [];
  const text = parts.length
    ? parts.map((p) => (p.type === 'text' && typeof p.text === 'string' ? p.text : JSON.stringify(p))).join('\n')
    : JSON.stringify(result.structuredContent ?? output ?? null);
  return isMcpError(output) ? { type: 'error-text' as const, value: text } : { type: 'text' as const, value: text };
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

function metaTools(entries: readonly CatalogEntry[]): ToolSet {
  const byName = new Map(entries.map((e) => [e.name, e]));
  return {
    search_tools: dynamicTool({
      description: `Search the ${entries.length} available tools by keywords; returns names, descriptions and input schemas. Call one with call_tool.`,
      inputSchema: jsonSchema({ type: 'object', properties: { query: { type: 'string', description: 'keywords' } }, required: ['query'] }),
      execute: async (input) => {
        const query = String((input as { query?: unknown })?.query ?? '');
        const tools = searchCatalog(entries, query).map((e) => ({ name: e.name, description: e.description, inputSchema: e.inputSchema }));
        return { content: [{ type: 'text', text: JSON.stringify({ tools }) }], structuredContent: { tools } };
      },
      toModelOutput,
    }),
    call_tool: dynamicTool({
      description: 'Call a tool found with search_tools by its exact name, with arguments matching its input schema.',
      inputSchema: jsonSchema({
        type: 'object',
        properties: { name: { type: 'string' }, arguments: { type: 'object', additionalProperties: true } },
        required: ['name'],
      }),
      execute: async (input, { abortSignal }) => {
        const { name, arguments: args } = (input ?? {}) as { name?: string; arguments?: Record<string, unknown> };
        const entry = name ? byName.get(name) : undefined;
        if (!entry) return { content: [{ type: 'text', text: `unknown tool "${name}"; use search_tools to find tool names` }], isError: true };
        return entry.call(args ?? {}, abortSignal);
      },
      toModelOutput,
    }),
  };
}

export function buildToolSet(entries: readonly CatalogEntry[]): ToolSet {
  if (entries.length > META_TOOL_THRESHOLD) return metaTools(entries);
  return Object.fromEntries(entries.map((e) => [e.name, direct(e)]));
}
