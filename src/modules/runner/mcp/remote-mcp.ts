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
 * (SVC_PRIVATE_ADDRESSES): with `deny` every connection is checked where it is made. svc's own function-tool endpoint
 * (`runTokenAuth`) is fronted too, outside that policy and without the gate, called with the run's token of the moment
 * (a token in the worker's headers would expire while the run goes on). A server is connected on the
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

/**
 * The servers the runner fronts: a tenant's, at a URL, and svc's own endpoint called with the run's token (the
 * function tools); not svc's other `platform` servers, nor stdio ones.
 */
export function frontable(spec: McpServerSpec): boolean {
  return (!spec.platform || spec.runTokenAuth === true) && Boolean(spec.url) && spec.transport !== 'stdio';
}

/** A server the worker calls itself (a runner that fronts none): svc's endpoint with the run's first token, not renewed. */
export function unfronted(spec: McpServerSpec, runToken: string | undefined): McpServerSpec {
  const { runTokenAuth, ...rest } = spec;
  return runTokenAuth ? { ...rest, headers: { ...spec.headers, ...(runToken ? { authorization: `Bearer ${runToken}` } : {}) } } : spec;
}

/**
 * svc's own endpoint called with the run's token (`runTokenAuth`): each request carries the token of the moment, which
 * run-token.ts renews while the run lasts (one the worker held would expire with it); none once the run ended.
 */
function withRunToken(f: GuardedFetch, rec: SessionRecord): GuardedFetch {
  return (url, init) => {
    const headers = new Headers(init?.headers);
    if (rec.runToken) headers.set('authorization', `Bearer ${rec.runToken}`);
    else headers.delete('authorization');
    return f(url, { ...init, headers });
  };
}

export function createRemoteMcpHost(deps: { privateAddresses: PrivateAddresses | undefined; version: string }): RemoteMcpHost {
  const byRun = new Map<string, { sessionId: string; servers: Map<string, RemoteServer & { close(): Promise<void> }> }>();
  // one connection pool per policy and distinct call timeout, kept for the process: a tenant's servers under the
  // address policy, svc's own endpoint (the conductor's, wherever it is) without it
  const fetchers = new Map<string, GuardedFetch>();
  const fetchFor = (ms: number, policy: PrivateAddresses) => {
    let f = fetchers.get(`${policy}:${ms}`);
    if (!f) fetchers.set(`${policy}:${ms}`, (f = createGuardedFetch({ privateAddresses: policy, headersTimeout: ms, bodyTimeout: ms })));
    return f;
  };

  function remote(spec: McpServerSpec, rec: SessionRecord): RemoteServer & { close(): Promise<void> } {
    const callTimeoutMs = spec.callTimeoutMs ?? DEFAULT_MCP_CALL_MS;
    let connecting: Promise<Client> | undefined;
    let closed = false;
    const connect = async () => {
      const [{ Client }, { StreamableHTTPClientTransport }, { SSEClientTransport }] = await loadSdk();
      const url = new URL(spec.url!);
      const own = spec.platform === true && spec.runTokenAuth === true;
      const fetch = own ? withRunToken(fetchFor(callTimeoutMs, 'allow'), rec) : fetchFor(callTimeoutMs, deps.privateAddresses ?? 'allow');
      const opts = { requestInit: { headers: spec.headers ?? {} }, fetch: fetch as never };
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
      byRun.set(runKey, { sessionId: rec.id, servers: new Map(specs.map((s) => [s.name, remote(s, rec)])) });
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
