import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMcpServer, type TestMcpServer } from '../../../../../test/support/mcp-server.ts';
import { openToolCatalog } from './mcp-catalog.ts';

/**
 * The general runtime connects a tenant's MCP server through the guarded fetcher: with SVC_PRIVATE_ADDRESSES=deny a
 * server on an internal address, written so or reached by a name, is never connected (the run goes on without it and
 * says why), while svc's own servers (`platform`: the runner's stdio relay, the function-tool endpoint) still are.
 */
let server: TestMcpServer;
beforeAll(async () => {
  server = await startMcpServer({ name: 'tenant-mcp' });
});
afterAll(() => server?.close());

const signal = new AbortController().signal;
/** This machine's name: it resolves to one of its own addresses (loopback or private), as the server's host would. */
const byName = () => server.url.replace('127.0.0.1', hostname());

describe('MCP servers of a run under the address policy', () => {
  it('connects a tenant server on a loopback address with allow, and not with deny, noting the refusal', async () => {
    const spec = { name: 'docs', transport: 'http', url: server.url };
    const allowed = await openToolCatalog({ mcpServers: [spec] } as never, signal, 'allow');
    try {
      expect(allowed.entries.map((e) => e.name)).toContain('docs__echo');
    } finally {
      await allowed.close();
    }
    const before = server.methods.length;
    const denied = await openToolCatalog({ mcpServers: [spec] } as never, signal, 'deny');
    try {
      expect(denied.entries).toEqual([]);
      expect(denied.notes.join('\n')).toMatch(/MCP server docs unavailable \(.*127\.0\.0\.1 is a loopback address; the address policy \(SVC_PRIVATE_ADDRESSES=deny\) allows public addresses only/);
    } finally {
      await denied.close();
    }
    expect(server.methods.length).toBe(before);
  });

  it('refuses at connect time a name that resolves to an internal address (nothing checked it before)', async () => {
    const before = server.methods.length;
    const denied = await openToolCatalog({ mcpServers: [{ name: 'docs', transport: 'http', url: byName() }] } as never, signal, 'deny');
    try {
      expect(denied.entries).toEqual([]);
      expect(denied.notes.join('\n')).toContain(`${hostname()} resolves to`);
    } finally {
      await denied.close();
    }
    expect(server.methods.length).toBe(before);
  });

  it("still connects svc's own servers with deny", async () => {
    const own = await openToolCatalog({ mcpServers: [{ name: 'fn', transport: 'http', url: server.url, toolPrefix: '', platform: true }] } as never, signal, 'deny');
    try {
      expect(own.entries.map((e) => e.name)).toContain('echo');
    } finally {
      await own.close();
    }
  });
});
