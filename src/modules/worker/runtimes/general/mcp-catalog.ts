import { createMCPClient, type MCPClient } from '@ai-sdk/mcp';
import type { WorkerRunRequest } from '../../../../contracts/worker.ts';
import { describeError } from '../../../../shared/errors.ts';

/**
 * Connects the MCP tool sources of one run: the runner's session toolkit (`sessionMcpUrl`, tools keep their names)
 * and each profile MCP server (tools become `<server>__<tool>`). A source that cannot be reached is reported as a
 * note and skipped: a run without tools beats no run at all.
 */
export interface CatalogEntry {
  /** The name the model sees. */
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  call(args: Record<string, unknown>, signal: AbortSignal | undefined): Promise<unknown>;
}

export interface ToolCatalog {
  entries: CatalogEntry[];
  /** Human-readable notes about unavailable sources, streamed as `progress` events. */
  notes: string[];
  close(): Promise<void>;
}

/** Bound on connecting to one source, so a black-holed address cannot stall the run. */
const CONNECT_TIMEOUT_MS = 10_000;
const MAX_PAGES = 20;

/** Provider tool names allow letters, digits, `_` and `-` (at most 64). */
export function toolNameSafe(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
}

interface Source {
  label: string;
  url: string;
  headers: Record<string, string> | undefined;
  transport: 'http' | 'sse';
  prefix: string;
}

function sourcesOf(req: WorkerRunRequest): Source[] {
  const sources: Source[] = [];
  if (req.sessionMcpUrl) sources.push({ label: 'session toolkit', url: req.sessionMcpUrl, headers: undefined, transport: 'http', prefix: '' });
  for (const server of req.mcpServers ?? []) {
    sources.push({
      label: `MCP server ${server.name}`,
      url: server.url,
      headers: server.headers,
      transport: server.transport === 'sse' ? 'sse' : 'http',
      prefix: server.toolPrefix ?? `${toolNameSafe(server.name)}__`,
    });
  }
  return sources;
}

async function listAll(client: MCPClient, signal: AbortSignal) {
  const tools = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const result = await client.listTools({ params: cursor ? { cursor } : undefined, options: { signal } });
    tools.push(...result.tools);
    cursor = result.nextCursor;
    if (!cursor) break;
  }
  return tools;
}

export async function openToolCatalog(req: WorkerRunRequest, signal: AbortSignal): Promise<ToolCatalog> {
  const clients: MCPClient[] = [];
  const notes: string[] = [];
  const entries: CatalogEntry[] = [];
  const seen = new Set<string>();
  if (!req.sessionMcpUrl) notes.push('session toolkit unavailable: no sessionMcpUrl given; continuing without it');

  const connected = await Promise.all(
    sourcesOf(req).map(async (source) => {
      const bounded = AbortSignal.any([signal, AbortSignal.timeout(CONNECT_TIMEOUT_MS)]);
      let client: MCPClient | undefined;
      try {
        client = await createMCPClient({
          transport: { type: source.transport, url: source.url, headers: source.headers },
          initializationOptions: { signal: bounded },
        });
        clients.push(client);
        return { source, client, tools: await listAll(client, bounded) };
      } catch (err) {
        notes.push(`${source.label} unavailable (${describeError(err)}); continuing without it`);
        return undefined;
      }
    }),
  );

  for (const found of connected) {
    if (!found) continue;
    for (const tool of found.tools) {
      const name = toolNameSafe(found.source.prefix + tool.name);
      if (seen.has(name)) continue; // the session toolkit is listed first and wins a clash
      seen.add(name);
      entries.push({
        name,
        description: tool.description ?? '',
        inputSchema: (tool.inputSchema as Record<string, unknown> | undefined) ?? { type: 'object', properties: {} },
        call: (args, callSignal) => found.client.callTool({ name: tool.name, arguments: args, options: { signal: callSignal } }),
      });
    }
  }
  return {
    entries,
    notes,
    async close() {
      await Promise.allSettled(clients.map((c) => c.close()));
    },
  };
}
