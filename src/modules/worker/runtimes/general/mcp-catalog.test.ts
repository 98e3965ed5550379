import { Hono } from 'hono';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen, type Listening } from '../../../../../test/support/listen.ts';
import { openToolCatalog } from './mcp-catalog.ts';

/**
 * The general runtime's MCP catalog with a server spec's `allowedTools` (the others are not offered) and
 * `callTimeoutMs` (one call's HTTP header and body timeouts: a function tool held by its client for longer than
 * fetch's 5-minute defaults is not cut short; a shorter one ends the call).
 */
describe('MCP catalog: allowedTools and callTimeoutMs', () => {
  let server: Listening;
  let release!: () => void;
  beforeAll(async () => {
    const app = new Hono().all('/mcp', async (c) => {
      const mcp = new McpServer({ name: 'held', version: '1.0.0' });
      mcp.registerTool('held', { description: 'Answers when the test releases it' }, async () => {
        await new Promise<void>((resolve) => (release = resolve));
        return { content: [{ type: 'text', text: 'released' }] };
      });
      mcp.registerTool('hidden', { description: 'Not allowed' }, async () => ({ content: [{ type: 'text', text: 'no' }] }));
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      await mcp.connect(transport);
      return transport.handleRequest(c.req.raw);
    });
    server = await listen(app.fetch);
  });
  afterAll(() => server?.close());

  const open = (callTimeoutMs: number) =>
    openToolCatalog({ mcpServers: [{ name: 'fn', transport: 'http', url: `${server.url}/mcp`, toolPrefix: '', allowedTools: ['held'], callTimeoutMs }] } as never, new AbortController().signal);

  it('offers only the allowed tools', async () => {
    const catalog = await open(60_000);
    try {
      expect(catalog.entries.map((e) => e.name)).toEqual(['held']);
    } finally {
      await catalog.close();
    }
  });

  it('waits for a held call within callTimeoutMs, and ends one held past it', async () => {
    const catalog = await open(60_000);
    try {
      const answer = catalog.entries[0].call({}, undefined);
      await expect.poll(() => release).toBeTypeOf('function');
      release();
      expect(JSON.stringify(await answer)).toContain('released');
    } finally {
      await catalog.close();
    }
    const short = await open(300);
    try {
      await expect(short.entries[0].call({}, undefined)).rejects.toThrow();
    } finally {
      release();
      await short.close();
    }
  });
});
