import { Hono } from 'hono';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { listen, type Listening } from '../../../../../test/support/listen.ts';
import { openToolCatalog } from './mcp-catalog.ts';

/**
 * A function tool's call held for 6 minutes, on fake timers (installed before any HTTP client starts its clock): with
 * fetch's defaults the worker's call is cut after 5 minutes (undici's header timeout), which is what ended long
 * client-executed function calls; with the server spec's `callTimeoutMs` (the turn deadline, 1 h by default) the
 * answer given after 6 minutes arrives.
 */
describe('a call held for 6 minutes', () => {
  let server: Listening;
  const releases: Array<() => void> = [];
  beforeAll(async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
    const app = new Hono().all('/mcp', async (c) => {
      const mcp = new McpServer({ name: 'held', version: '1.0.0' });
      mcp.registerTool('held', { description: 'Answers when the test releases it' }, async () => {
        await new Promise<void>((resolve) => releases.push(resolve));
        return { content: [{ type: 'text', text: 'released' }] };
      });
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      await mcp.connect(transport);
      return transport.handleRequest(c.req.raw);
    });
    server = await listen(app.fetch);
  });
  afterAll(async () => {
    releases.forEach((r) => r());
    vi.useRealTimers();
    await server?.close();
  });

  const held = async (callTimeoutMs?: number) => {
    const catalog = await openToolCatalog(
      { mcpServers: [{ name: 'fn', transport: 'http', url: `${server.url}/mcp`, toolPrefix: '', ...(callTimeoutMs ? { callTimeoutMs } : {}) }] } as never,
      new AbortController().signal,
    );
    const before = releases.length;
    let settled: { ok: boolean; value: unknown } | undefined;
    const call = catalog.entries[0].call({}, undefined).then(
      (value) => (settled = { ok: true, value }),
      (value) => (settled = { ok: false, value }),
    );
    await vi.waitFor(() => expect(releases.length).toBe(before + 1), { timeout: 10_000 });
    return { catalog, call, release: releases[before], settled: () => settled };
  };

  it("is cut after 5 minutes with fetch's defaults", async () => {
    const h = await held();
    await vi.advanceTimersByTimeAsync(6 * 60_000);
    await h.call;
    expect(h.settled()?.ok).toBe(false);
    expect(String((h.settled()?.value as { cause?: unknown }).cause)).toContain('HeadersTimeoutError');
    h.release();
    await h.catalog.close();
  });

  it('completes with the answer given after 6 minutes when callTimeoutMs is the 1-hour deadline', async () => {
    const h = await held(3_600_000);
    await vi.advanceTimersByTimeAsync(6 * 60_000);
    expect(h.settled()).toBeUndefined();
    h.release();
    await h.call;
    expect(h.settled()?.ok).toBe(true);
    expect(JSON.stringify(h.settled()?.value)).toContain('released');
    await h.catalog.close();
  });
});
