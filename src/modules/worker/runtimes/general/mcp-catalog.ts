import { createMCPClient, type MCPClient } from '@ai-sdk/mcp';
import { Agent, fetch as undiciFetch } from 'undici';
import { TOOLSET_PARAM, type WorkerRunRequest } from '../../../../contracts/worker.ts';
import { describeError } from '../../../../shared/errors.ts';
import { APPROVAL_HOLD_MAX_S } from '../../../../contracts/approvals.ts';
import { tracedFetch } from './telemetry.ts';
import { injectTrace, tracingOn } from '../../../../shared/tracing/index.ts';
import { createGuardedFetch, type GuardedFetch, type PrivateAddresses } from '../../../../shared/egress/index.ts';

/**
 * Connects the MCP tool sources of one run: the runner's session toolkit (`sessionMcpUrl`, tools keep their names)
 * and each profile MCP server (tools become `<server>__<tool>`). A runner fronts a run's HTTP and SSE servers, so
 * their calls pass its permission gate: they arrive here as svc's own (`platform`) servers at the runner, and the
 * runner holds their headers and applies the address policy. A source that cannot be reached is reported as a
 * note and skipped: a run without tools beats no run at all. A tenant's server (any but the session toolkit and svc's
 * own `platform` servers) is connected through the guarded fetcher under the address policy (SVC_PRIVATE_ADDRESSES):
 * with `deny`, every connection to it is checked where it is made, so a name that resolves to an internal address
 * (now, or only by the time the worker connects) is refused, and the source is noted as unavailable with the reason.
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
/** The longest a session toolkit call may take: an approval's longest hold, and some. */
const SESSION_TOOLKIT_CALL_MS = (APPROVAL_HOLD_MAX_S + 300) * 1000;

export { toolNameSafe } from './tool-names.ts';
import { toolNameSafe } from './tool-names.ts';

interface Source {
  label: string;
  url: string;
  headers: Record<string, string> | undefined;
  transport: 'http' | 'sse';
  prefix: string;
  /** Set for the session toolkit when the runner names its toolset: the connection may be kept across runs. */
  keepKey?: string;
  /** With keepKey: the runner and toolset name, whose tool list serves every session of that toolset. */
  toolsetKey?: string;
  /** The server's tools the model may see (absent: all). */
  allowedTools?: readonly string[];
  /** A longer (or shorter) wait for one call's answer than fetch's default 5 minutes (a client-executed function). */
  callTimeoutMs?: number;
  /** A tenant's server: connected under the address policy. */
  tenant?: boolean;
}

/**
 * A fetch whose header and body timeouts are `ms` (undici's defaults, 5 minutes each, would end a call that waits
 * longer for its answer, e.g. a function tool the client runs for an hour). One dispatcher per distinct timeout.
 */
const dispatchers = new Map<number, Agent>();
function fetchWithTimeout(ms: number): typeof fetch {
  let dispatcher = dispatchers.get(ms);
  if (!dispatcher) dispatchers.set(ms, (dispatcher = new Agent({ headersTimeout: ms, bodyTimeout: ms })));
  const d = dispatcher;
  return ((input: string | URL | Request, init?: RequestInit) => {
    // traced like tracedFetch: the request carries the active span's traceparent
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
    if (tracingOn()) injectTrace(headers);
    return undiciFetch(input as never, { ...(init as object), headers: [...headers], dispatcher: d } as never);
  }) as unknown as typeof fetch;
}

/**
 * The guarded fetcher for tenants' servers under `deny`, per distinct call timeout (0: undici's defaults), traced like
 * tracedFetch. One connection pool each, kept for the process.
 */
const guarded = new Map<number, GuardedFetch>();
function guardedFetch(ms = 0): typeof fetch {
  let f = guarded.get(ms);
  if (!f) guarded.set(ms, (f = createGuardedFetch({ privateAddresses: 'deny', ...(ms ? { headersTimeout: ms, bodyTimeout: ms } : {}) })));
  const g = f;
  return ((input: string | URL, init?: RequestInit) => {
    const headers = new Headers(init?.headers);
    if (tracingOn()) injectTrace(headers);
    return g(input, { ...init, headers });
  }) as typeof fetch;
}

/** How a source is fetched: a tenant's server under `deny` through the guarded fetcher; the others as before. */
function fetchOf(source: Source, policy: PrivateAddresses): typeof fetch {
  if (source.tenant && policy === 'deny') return guardedFetch(source.callTimeoutMs);
  return source.callTimeoutMs ? fetchWithTimeout(source.callTimeoutMs) : tracedFetch;
}

type Tools = Awaited<ReturnType<typeof listAll>>;

/**
 * Session toolkit connections kept across a session's runs: the MCP handshake and tool list cost the worker and the
 * runner more than a short run's own work. Kept while the runner's toolset name (TOOLSET_PARAM: its process and the
 * profile's tool selection) is the same, for at most an hour (the session token it was opened with lives two), and
 * dropped when idle or when a call through it fails.
 */
interface Kept {
  client: MCPClient;
  tools: Tools;
  openedAt: number;
  usedAt: number;
}
const kept = new Map<string, Kept>();
const KEEP_MAX = 256;
const KEEP_AGE_MS = 3_600_000;
const KEEP_IDLE_MS = 10 * 60_000;

function keepKeyOf(url: string): string | undefined {
  try {
    const u = new URL(url);
    if (!u.searchParams.get(TOOLSET_PARAM)) return undefined;
    u.searchParams.delete('svc_worker_token');
    return u.href;
  } catch {
    return undefined;
  }
}

/**
 * The tool lists of session toolkits by runner and toolset name: one toolset (a runner process and a tool selection)
 * lists the same tools on every session, so a new session of a known toolset starts its run without a handshake: the
 * model is offered the listed tools, and the session's own connection is opened with the first call of one.
 */
const listed = new Map<string, { tools: Tools; at: number }>();

function toolsetKeyOf(url: string): string | undefined {
  try {
    const u = new URL(url);
    const toolset = u.searchParams.get(TOOLSET_PARAM);
    return toolset ? `${u.origin}\u0000${toolset}` : undefined;
  } catch {
    return undefined;
  }
}

function listedTools(key: string): Tools | undefined {
  const entry = listed.get(key);
  if (entry && Date.now() - entry.at > KEEP_AGE_MS) listed.delete(key);
  else return entry?.tools;
}

function remember(key: string, tools: Tools): void {
  if (listed.size >= KEEP_MAX && !listed.has(key)) listed.delete(listed.keys().next().value!);
  listed.set(key, { tools, at: Date.now() });
}

function drop(key: string, entry: Kept): void {
  if (kept.get(key) === entry) kept.delete(key);
  void entry.client.close().catch(() => {});
}

function takeKept(key: string): Kept | undefined {
  const now = Date.now();
  for (const [k, e] of kept) if (now - e.usedAt > KEEP_IDLE_MS || now - e.openedAt > KEEP_AGE_MS) drop(k, e);
  const entry = kept.get(key);
  if (entry) entry.usedAt = now;
  return entry;
}

function keep(key: string, client: MCPClient, tools: Tools): Kept {
  if (kept.size >= KEEP_MAX) {
    const [oldest] = [...kept.entries()].sort((a, b) => a[1].usedAt - b[1].usedAt);
    if (oldest) drop(oldest[0], oldest[1]);
  }
  const entry = { client, tools, openedAt: Date.now(), usedAt: Date.now() };
  kept.set(key, entry);
  return entry;
}

function sourcesOf(req: WorkerRunRequest): Source[] {
  const sources: Source[] = [];
  // a toolkit call under an `ask` policy is held on the runner while a person decides (contracts/approvals.ts):
  // fetch's 5-minute header wait must not end it first
  if (req.sessionMcpUrl) sources.push({ label: 'session toolkit', url: req.sessionMcpUrl, headers: undefined, transport: 'http', prefix: '', keepKey: keepKeyOf(req.sessionMcpUrl), toolsetKey: toolsetKeyOf(req.sessionMcpUrl), callTimeoutMs: SESSION_TOOLKIT_CALL_MS });
  for (const server of req.mcpServers ?? []) {
    if (!server.url) continue; // a stdio server the runner did not start (noted by openToolCatalog)
    sources.push({
      label: `MCP server ${server.name}`,
      url: server.url,
      headers: server.headers,
      transport: server.transport === 'sse' ? 'sse' : 'http',
      prefix: server.toolPrefix ?? `${toolNameSafe(server.name)}__`,
      ...(server.allowedTools ? { allowedTools: server.allowedTools } : {}),
      ...(server.callTimeoutMs ? { callTimeoutMs: server.callTimeoutMs } : {}),
      tenant: !server.platform,
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

/** A connected source: its tools, and its client (opened on first use for a session of a known toolset). */
interface Connected {
  source: Source;
  tools: Tools;
  client(): Promise<MCPClient>;
  /** The kept connection the calls go through, if any (dropped when a call fails). */
  kept(): Kept | undefined;
}

function connect(source: Source, policy: PrivateAddresses, signal: AbortSignal): Promise<MCPClient> {
  return createMCPClient({
    transport: { type: source.transport, url: source.url, headers: source.headers, fetch: fetchOf(source, policy) },
    initializationOptions: { signal },
  });
}

/**
 * A new session of a toolset this worker has listed: its tools are known, and its connection (kept for the session's
 * later runs) is opened by the first tool call. A run that calls no tool costs the runner nothing. A failed open
 * fails that call (the model reads the error) and the next call tries again.
 */
function lazily(source: Source, policy: PrivateAddresses, keepKey: string, tools: Tools, signal: AbortSignal): Connected {
  let opening: Promise<Kept> | undefined;
  let entry: Kept | undefined;
  const open = () =>
    (opening ??= (async () => {
      const again = takeKept(keepKey);
      if (again) return (entry = again);
      const client = await connect(source, policy, AbortSignal.any([signal, AbortSignal.timeout(CONNECT_TIMEOUT_MS)]));
      return (entry = keep(keepKey, client, tools));
    })().catch((err: unknown) => {
      opening = undefined;
      throw err;
    }));
  return { source, tools, client: async () => (await open()).client, kept: () => entry };
}

/** `policy`: SVC_PRIVATE_ADDRESSES of this worker (the config's `worker.privateAddresses`), for the tenant's servers. */
export async function openToolCatalog(req: WorkerRunRequest, signal: AbortSignal, policy: PrivateAddresses = 'allow'): Promise<ToolCatalog> {
  const clients: MCPClient[] = [];
  const notes: string[] = [];
  const entries: CatalogEntry[] = [];
  const seen = new Set<string>();
  if (!req.sessionMcpUrl) notes.push('session toolkit unavailable: no sessionMcpUrl given; continuing without it');
  for (const s of req.mcpServers ?? []) if (!s.url) notes.push(`MCP server ${s.name} unavailable: a ${s.transport} server is started by the runner, and none was; continuing without it`);

  const connected = await Promise.all(
    sourcesOf(req).map(async (source): Promise<Connected | undefined> => {
      const reused = source.keepKey ? takeKept(source.keepKey) : undefined;
      if (reused) return { source, tools: reused.tools, client: async () => reused.client, kept: () => reused };
      const known = source.keepKey && source.toolsetKey ? listedTools(source.toolsetKey) : undefined;
      if (known) return lazily(source, policy, source.keepKey!, known, signal);
      const bounded = AbortSignal.any([signal, AbortSignal.timeout(CONNECT_TIMEOUT_MS)]);
      let client: MCPClient | undefined;
      try {
        client = await connect(source, policy, bounded);
        const tools = await listAll(client, bounded);
        if (source.toolsetKey) remember(source.toolsetKey, tools);
        const opened = client;
        if (source.keepKey) {
          const entry = keep(source.keepKey, client, tools);
          return { source, tools, client: async () => opened, kept: () => entry };
        }
        clients.push(client);
        return { source, tools, client: async () => opened, kept: () => undefined };
      } catch (err) {
        if (client) void client.close().catch(() => {});
        notes.push(`${source.label} unavailable (${describeError(err)}); continuing without it`);
        return undefined;
      }
    }),
  );

  for (const found of connected) {
    if (!found) continue;
    for (const tool of found.tools) {
      if (found.source.allowedTools && !found.source.allowedTools.includes(tool.name)) continue; // hidden from the model
      const name = toolNameSafe(found.source.prefix + tool.name);
      if (seen.has(name)) continue; // the session toolkit is listed first and wins a clash
      seen.add(name);
      entries.push({
        name,
        description: tool.description ?? '',
        inputSchema: (tool.inputSchema as Record<string, unknown> | undefined) ?? { type: 'object', properties: {} },
        call: async (args, callSignal) => {
          try {
            return await (await found.client()).callTool({ name: tool.name, arguments: args, options: { signal: callSignal } });
          } catch (err) {
            // a kept connection that fails (the runner restarted, the session went) is not offered to the next run
            const entry = found.kept();
            if (entry && !callSignal?.aborted) drop(found.source.keepKey!, entry);
            throw err;
          }
        },
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
