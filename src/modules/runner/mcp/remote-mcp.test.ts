import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMcpServer, type TestMcpServer } from '../../../../test/support/mcp-server.ts';
import type { SessionRecord } from '../sessions/sessions.store.ts';
import { createRemoteMcpHost } from './remote-mcp.ts';

describe('the MCP servers a runner fronts for a run', () => {
  let server: TestMcpServer;
  const session = { id: 'sess-1' } as SessionRecord;
  beforeAll(async () => {
    server = await startMcpServer({ name: 'docs' });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('connects on first use with the spec headers, calls the server, and forgets the run when it closes', async () => {
    const host = createRemoteMcpHost({ privateAddresses: 'allow', version: 'test' });
    host.open(session, 'run-1', [{ name: 'docs', transport: 'http', url: server.url, headers: { 'X-Team': 'blue' } }]);
    expect(server.methods).toEqual([]);
    const docs = host.find('sess-1', 'docs')!;
    expect(docs.callTimeoutMs).toBe(300_000);
    const client = await docs.client();
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['echo', 'fail']);
    expect(await client.callTool({ name: 'echo', arguments: { message: 'hi' } })).toMatchObject({ content: [{ type: 'text', text: 'echo: hi' }] });
    expect(server.extraHeaders.at(-1)).toMatchObject({ 'x-team': 'blue' });
    expect(host.find('sess-2', 'docs')).toBeUndefined();
    await host.close('run-1');
    expect(host.find('sess-1', 'docs')).toBeUndefined();
  });

  it('never reaches a server on an internal address under SVC_PRIVATE_ADDRESSES=deny, and says why', async () => {
    const before = server.methods.length;
    const host = createRemoteMcpHost({ privateAddresses: 'deny', version: 'test' });
    host.open(session, 'run-2', [{ name: 'docs', transport: 'http', url: server.url, callTimeoutMs: 5_000 }]);
    await expect(host.find('sess-1', 'docs')!.client()).rejects.toThrow(/^cannot connect to 127\.0\.0\.1:\d+: 127\.0\.0\.1 is a loopback address; the address policy \(SVC_PRIVATE_ADDRESSES=deny\)/);
    expect(server.methods.length).toBe(before);
    await host.close('run-2');
  });

  it("calls svc's own endpoint with the run's token of the moment, outside the address policy, and with none once the run ended", async () => {
    const rec = { id: 'sess-3', runToken: 'first-token' } as SessionRecord;
    const host = createRemoteMcpHost({ privateAddresses: 'deny', version: 'test' });
    host.open(rec, 'run-3', [{ name: 'svc_functions', transport: 'http', url: server.url, platform: true, runTokenAuth: true }]);
    const client = await host.find('sess-3', 'svc_functions')!.client();
    expect(server.authorizations.at(-1)).toBe('Bearer first-token');
    rec.runToken = 'renewed-token'; // the runner renewed it (run-token.ts)
    await client.callTool({ name: 'echo', arguments: { message: 'later' } });
    expect(server.authorizations.at(-1)).toBe('Bearer renewed-token');
    const seen = server.authorizations.length;
    rec.runToken = undefined; // the run ended
    await client.callTool({ name: 'echo', arguments: { message: 'after' } });
    expect(server.authorizations.length).toBe(seen);
    await host.close('run-3');
  });
});
