import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { transportMessage } from '../../../contracts/http-client.ts';
import type { McpServerSpec } from '../../../contracts/worker.ts';
import { createGuardedFetch, type GuardedFetch, type PrivateAddresses } from '../../../shared/egress/index.ts';
import type { SessionRecord } from '../sessions/sessions.store.ts';

/**
 * The HTTP and SSE MCP servers of a run (the profile's, and a tenant's per-run ones such as a /v1 agent's), fronted by
 * this runner so their calls pass the permission gate (toolkit/gate.ts) like the toolkit's: the worker reaches each at
 * `/runner/sessions/{id}/mcp/server/{name}` (mcp.routes.ts), and this host is the MCP client of the server itself,
 * with its headers (credentials never reach the worker), its call timeout, and under the address policy
 * (SVC_PRIVATE_ADDRESSES): with `deny` every connection is checked where it is made. A server is connected on the
 * worker's first request for it and closed with the run; a connection that fails is tried again on the next request.
 */
export interface RemoteServer {
  spec: McpServerSpec;
  /** The server's MCP client, connected on first use. Throws (the reason) when it cannot be reached. */
  client(): Promise<Client>;
  /** How long one call may wait for its answer (the spec's callTimeoutMs, else fetch's 5 minutes). */
  callTimeoutMs: number;
}

export interface RemoteMcpHost {
  /** Remembers the run's fronted servers; nothing is connected yet. */
  open(rec: SessionRecord, runKey: string, specs: readonly McpServerSpec[]): void;
  /** The server `name` of the session's current run. */
  find(sessionId: string, name: string): RemoteServer | undefined;
  close(runKey: string): Promise<void>;
}

/** fetch's own wait for an answer, the bound a server's calls had when the worker called it itself. */
export const DEFAULT_MCP_CALL_MS = 300_000;
const CONNECT_TIMEOUT_MS = 10_000;

type Sdk = [typeof import('@modelcontextprotocol/sdk/client/index.js'), typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js'), typeof import('@modelcontextprotocol/sdk/client/sse.js')];
let sdk: Promise<Sdk> | undefined;
const loadSdk = () =>
  (sdk ??= Promise.all([import('@modelcontextprotocol/sdk/client/index.js'), import('@modelcontextprotocol/sdk/client/streamableHttp.js'), import('@modelcontextprotocol/sdk/client/sse.js')]));

/** The servers the runner fronts: a tenant's, at a URL (svc's own `platform` servers and stdio ones are not). */
export function frontable(spec: McpServerSpec): boolean {
  return !spec.platform && Boolean(spec.url) && spec.transport !== 'stdio';
}

export function createRemoteMcpHost(deps: { privateAddresses: PrivateAddresses | undefined; version: string }): RemoteMcpHost {
  const byRun = new Map<string, { sessionId: string; servers: Map<string, RemoteServer & { close(): Promise<void> }> }>();
  // one guarded connection pool per distinct call timeout, kept for the process
  const fetchers = new Map<number, GuardedFetch>();
  const fetchFor = (ms: number) => {
    let f = fetchers.get(ms);
    if (!f) fetchers.set(ms, (f = createGuardedFetch({ privateAddresses: deps.privateAddresses ?? 'allow', headersTimeout: ms, bodyTimeout: ms })));
    return f;
  };

  function remote(spec: McpServerSpec): RemoteServer & { close(): Promise<void> } {
    const callTimeoutMs = spec.callTimeoutMs ?? DEFAULT_MCP_CALL_MS;
    let connecting: Promise<Client> | undefined;
    let closed = false;
    const connect = async () => {
      const [{ Client }, { StreamableHTTPClientTransport }, { SSEClientTransport }] = await loadSdk();
      const url = new URL(spec.url!);
      const opts = { requestInit: { headers: spec.headers ?? {} }, fetch: fetchFor(callTimeoutMs) as never };
      const transport = spec.transport === 'sse' ? new SSEClientTransport(url, opts) : new StreamableHTTPClientTransport(url, opts);
      const client = new Client({ name: 'svc-runner', version: deps.version });
      try {
        await client.connect(transport, { timeout: CONNECT_TIMEOUT_MS, signal: AbortSignal.timeout(CONNECT_TIMEOUT_MS) });
      } catch (err) {
        await client.close().catch(() => {});
        // the reason the worker's note will give: where, and why (fetch's own message hides the cause)
        throw new Error(`cannot connect to ${url.host}: ${transportMessage(err)}`, { cause: err });
      }
      if (closed) {
        await client.close().catch(() => {});
        throw new Error('the run ended');
      }
      return client;
    };
    return {
      spec,
      callTimeoutMs,
      client() {
        connecting ??= connect().catch((err: unknown) => {
          connecting = undefined;
          throw err;
        });
        return connecting;
      },
      async close() {
        closed = true;
        const c = await connecting?.catch(() => undefined);
        await c?.close().catch(() => {});
      },
    };
  }

  return {
    open(rec, runKey, specs) {
      if (!specs.length) return;
      byRun.set(runKey, { sessionId: rec.id, servers: new Map(specs.map((s) => [s.name, remote(s)])) });
    },
    find(sessionId, name) {
      for (const run of byRun.values()) if (run.sessionId === sessionId && run.servers.has(name)) return run.servers.get(name);
      return undefined;
    },
    async close(runKey) {
      const run = byRun.get(runKey);
      byRun.delete(runKey);
      await Promise.all([...(run?.servers.values() ?? [])].map((s) => s.close()));
    },
  };
}
