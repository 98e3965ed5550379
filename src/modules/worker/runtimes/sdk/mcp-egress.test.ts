import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startMcpServer, type TestMcpServer } from '../../../../../test/support/mcp-server.ts';
import { createGuardedFetch, POLICY_NOTE } from '../../../../shared/egress/index.ts';
import { forwardTenantServers } from './mcp-egress.ts';
import type { McpServerEntry } from './mcp.ts';

/**
 * The forwarders Claude Code and Codex get for a tenant's MCP servers under SVC_PRIVATE_ADDRESSES=deny, driven by the
 * MCP SDK's own clients (what those CLIs speak): a streamable-HTTP server and a legacy SSE server work through them
 * (with a fetcher that allows the loopback test servers), and with `deny` a server on an internal address is never
 * reached: the client gets the refusal.
 */
let streamable: TestMcpServer;
let sse: { url: string; hits: number; server: Server };

/** A legacy SSE MCP server: GET /sse opens the stream and names `/messages?sessionId=…` (relative) as its endpoint. */
async function startSseServer() {
  const transports = new Map<string, SSEServerTransport>();
  const state = { hits: 0 };
  const server = createServer(async (req, res) => {
    state.hits++;
    if (req.method === 'GET' && req.url === '/sse') {
      const mcp = new McpServer({ name: 'sse-mcp', version: '1.0.0' });
      mcp.registerTool('shout', { inputSchema: { text: z.string() } }, async ({ text }) => ({ content: [{ type: 'text', text: text.toUpperCase() }] }));
      const transport = new SSEServerTransport('/messages', res);
      transports.set(transport.sessionId, transport);
      await mcp.connect(transport);
      return;
    }
    const id = new URL(req.url ?? '/', 'http://x').searchParams.get('sessionId') ?? '';
    const transport = transports.get(id);
    if (!transport) return void res.writeHead(404).end();
    await transport.handlePostMessage(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/sse`,
    server,
    get hits() {
      return state.hits;
    },
  };
}

beforeAll(async () => {
  streamable = await startMcpServer({ name: 'tenant-mcp' });
  sse = await startSseServer();
});
afterAll(async () => {
  await streamable?.close();
  sse?.server.closeAllConnections();
  await new Promise<void>((resolve) => (sse ? sse.server.close(() => resolve()) : resolve()));
});

const entry = (name: string, url: string, transport: 'http' | 'sse', tenant = true): McpServerEntry => ({ name, url, headers: undefined, transport, toolPrefix: `${name}__`, tenant });
const allowLoopback = createGuardedFetch({ privateAddresses: 'allow' });

async function connected(url: string, transport: 'http' | 'sse') {
  const client = new Client({ name: 'cli-stand-in', version: '1.0.0' });
  await client.connect(transport === 'http' ? new StreamableHTTPClientTransport(new URL(url)) : new SSEClientTransport(new URL(url)));
  return client;
}

describe("the forwarders of a tenant's MCP servers for Claude Code and Codex", () => {
  it('carries streamable-HTTP and SSE sessions through, and leaves the session toolkit and svc servers alone', async () => {
    const toolkit = entry('svc', 'http://127.0.0.1:1/runner/sessions/s/mcp?svc_worker_token=t', 'http', false);
    const f = await forwardTenantServers([toolkit, entry('docs', streamable.url, 'http'), entry('loud', sse.url, 'sse')], 'deny', allowLoopback);
    try {
      const [own, docs, loud] = f.servers;
      expect(own).toEqual(toolkit);
      expect(docs.url).not.toBe(streamable.url);
      expect(new URL(docs.url).pathname).toBe(new URL(streamable.url).pathname);
      const a = await connected(docs.url, 'http');
      expect(JSON.stringify(await a.callTool({ name: 'echo', arguments: { message: 'through' } }))).toContain('echo: through');
      await a.close();
      const b = await connected(loud.url, 'sse');
      expect(JSON.stringify(await b.callTool({ name: 'shout', arguments: { text: 'relayed' } }))).toContain('RELAYED');
      await b.close();
    } finally {
      await f.close();
    }
  });

  it("keeps an SSE server's message endpoint on the forwarder, and refuses one on another origin", async () => {
    const raw = createServer((_req, res) => {
      const own = `http://127.0.0.1:${(raw.address() as AddressInfo).port}/messages?sessionId=abc`;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`event: endpoint\ndata: ${own}\n\n: still here\n\nevent: endpoint\ndata: http://elsewhere.example/m\n\nevent: message\ndata: {"jsonrpc":"2.0"}\n\n`);
    });
    await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
    const f = await forwardTenantServers([entry('raw', `http://127.0.0.1:${(raw.address() as AddressInfo).port}/sse`, 'sse')], 'deny', allowLoopback);
    try {
      const text = await (await fetch(f.servers[0].url)).text();
      expect(text).toBe('event: endpoint\ndata: /messages?sessionId=abc\n\n: still here\n\nevent: endpoint\ndata: /.svc-egress/endpoint-on-another-origin\n\nevent: message\ndata: {"jsonrpc":"2.0"}\n\n');
      const refused = await fetch(new URL('/.svc-egress/endpoint-on-another-origin', f.servers[0].url), { method: 'POST', body: '{}' });
      expect(refused.status).toBe(502);
      expect((await refused.json()).error.message).toBe('the MCP server named a message endpoint on another origin; it is not called');
    } finally {
      await f.close();
      raw.closeAllConnections();
      await new Promise<void>((resolve) => raw.close(() => resolve()));
    }
  });

  it('never reaches a server on an internal address with deny: the client gets the refusal', async () => {
    const before = { methods: streamable.methods.length, sse: sse.hits };
    const f = await forwardTenantServers([entry('docs', streamable.url, 'http'), entry('loud', sse.url, 'sse')], 'deny');
    try {
      const res = await fetch(f.servers[0].url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' });
      expect(res.status).toBe(502);
      expect(await res.json()).toEqual({ jsonrpc: '2.0', error: { code: -32000, message: `127.0.0.1 is a loopback address; ${POLICY_NOTE}` }, id: null });
      await expect(connected(f.servers[1].url, 'sse')).rejects.toThrow();
    } finally {
      await f.close();
    }
    expect({ methods: streamable.methods.length, sse: sse.hits }).toEqual(before);
  });

  it('hands the servers over unchanged with allow', async () => {
    const servers = [entry('docs', streamable.url, 'http')];
    const f = await forwardTenantServers(servers, 'allow');
    expect(f.servers).toEqual(servers);
    await f.close();
  });
});
