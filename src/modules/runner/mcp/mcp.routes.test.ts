import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { listen, type Listening } from '../../../../test/support/listen.ts';
import { call, makeRunner } from '../runner.fixture.ts';
import type { Runner } from '../runner.ts';

/**
 * The session MCP endpoint over real HTTP with the MCP SDK client, the way a worker or an external agent uses it.
 * The runner requires an internal token, which the MCP path does not: workers do not hold it. They hold the session's
 * own token instead, minted into the URL each run of the session receives.
 */
let runner: Runner;
let http: Listening;
const clients: Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
  await http?.close();
  await runner?.close();
});

async function start(tools: string[]) {
  runner = makeRunner({ internalToken: 'secret' });
  http = await listen((req) => runner.app.fetch(req));
  const create = (path: string, body: unknown) => call(runner, 'POST', path, { tenant: 'acme', token: 'secret', body });
  await create('/runner/profiles', { profile: { name: 'helper', runtime: 'general', tools } });
  const { sessionId } = await (await create('/runner/sessions', { profileName: 'helper' })).json();
  return { sessionId: sessionId as string, url: mcpUrlOf(sessionId) };
}

/** The URL a run of the session gets, on the port the test listens on. */
function mcpUrlOf(sessionId: string): string {
  const minted = new URL(runner.sessionMcpUrl(sessionId));
  return `${http.url}${minted.pathname}${minted.search}`;
}

const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } };
const post = (url: string) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify(initialize) });

async function connect(url: string): Promise<Client> {
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  clients.push(client);
  return client;
}

const text = (r: any) => r.content.map((p: any) => p.text).join('');

describe('session MCP endpoint', () => {
  it('lists exactly the profile-scoped tools, with their JSON input schemas', async () => {
    const { url } = await start(['@files-read', 'fs_write']);
    const { tools } = await (await connect(url)).listTools();
    expect(tools.map((t) => t.name)).toEqual(['fs_read', 'fs_write', 'fs_list', 'fs_search']);
    expect(tools[1].inputSchema).toMatchObject({ type: 'object', required: ['path', 'content'] });
  });

  it('calls tools: a write is readable by the next call', async () => {
    const { url } = await start(['@files']);
    const client = await connect(url);
    const write = await client.callTool({ name: 'fs_write', arguments: { path: 'hello.md', content: '# hi' } });
    expect(write).toMatchObject({ isError: false, structuredContent: { path: '/work/hello.md', bytesWritten: 4 } });
    const read = await client.callTool({ name: 'fs_read', arguments: { path: '/work/hello.md' } });
    expect(text(read)).toBe('# hi');
  });

  it('refuses a tool outside the scope as an error result, as invoke refuses it with 403', async () => {
    const { sessionId, url } = await start(['fs_read']);
    const refused = await (await connect(url)).callTool({ name: 'fs_write', arguments: { path: 'x', content: 'y' } });
    expect(refused).toMatchObject({ isError: true });
    expect(text(refused)).toBe('tool fs_write is not in the scope of profile helper');
    const invoke = await call(runner, 'POST', `/runner/sessions/${sessionId}/toolkit/invoke`, { tenant: 'acme', token: 'secret', body: { toolName: 'fs_write', input: { path: 'x', content: 'y' } } });
    expect(invoke.status).toBe(403);
  });

  it('answers unknown tools, failing tools and path escapes with readable error results', async () => {
    const { url } = await start(['@files']);
    const client = await connect(url);
    expect(text(await client.callTool({ name: 'rm_rf', arguments: {} }))).toBe('unknown tool: rm_rf');
    const missing = await client.callTool({ name: 'fs_read', arguments: { path: 'nope.txt' } });
    expect(missing).toMatchObject({ isError: true, content: [{ text: '/work/nope.txt: no such file or directory' }] });
    const escape = await client.callTool({ name: 'fs_read', arguments: { path: '../../../../etc/passwd' } });
    expect(escape).toMatchObject({ isError: true, content: [{ text: 'path "../../../../etc/passwd" refused: ".." segments are not allowed' }] });
  });

  it('answers 401 without the session token, or with another session\'s, before looking the session up', async () => {
    const { sessionId, url } = await start(['@files']);
    const other = await (await call(runner, 'POST', '/runner/sessions', { tenant: 'acme', token: 'secret', body: { profileName: 'helper' } })).json();
    const bare = `${http.url}/runner/sessions/${sessionId}/mcp`;
    for (const attempt of [bare, `${bare}?svc_worker_token=`, `${bare}?svc_worker_token=forged.token`, `${bare}${new URL(mcpUrlOf(other.sessionId)).search}`, `${http.url}/runner/sessions/sess-nope/mcp`]) {
      const res = await post(attempt);
      expect(res.status).toBe(401);
      expect((await res.json()).error).toMatch(/^invalid or missing worker token/);
    }
    // the internal token is no key to it either
    const internal = await fetch(bare, { method: 'POST', headers: { 'content-type': 'application/json', 'X-Svc-Internal-Token': 'Bearer secret' }, body: JSON.stringify(initialize) });
    expect(internal.status).toBe(401);
    expect((await post(url)).status).toBe(200);
  });

  it('answers 404 for an unknown session and 405 for the server-initiated stream', async () => {
    const { url } = await start([]);
    const unknown = await fetch(mcpUrlOf('sess-nope'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(unknown.status).toBe(404);
    await expect(connect(mcpUrlOf('sess-nope'))).rejects.toThrow();
    const get = await fetch(url, { headers: { accept: 'text/event-stream' } });
    expect(get.status).toBe(405);
  });

  it('closes the endpoint when the session is deleted', async () => {
    const { sessionId, url } = await start(['@files']);
    const client = await connect(url);
    expect((await client.listTools()).tools.length).toBe(5);
    expect((await call(runner, 'DELETE', `/runner/sessions/${sessionId}`, { tenant: 'acme', token: 'secret' })).status).toBe(204);
    await expect(client.listTools()).rejects.toThrow(/404|unknown session/);
  });
});
