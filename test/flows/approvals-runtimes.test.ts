import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentsHarness, type AgentsHarness } from '../support/agents.ts';
import { lastInputOf, modelRequests } from '../support/fake-provider.ts';
import { startMcpServer, type TestMcpServer } from '../support/mcp-server.ts';
import { readUntil } from '../support/sse.ts';

/**
 * The permission gate sees every runtime's calls: Claude Code (`runtime_a`) and Codex (`runtime_b`) call svc's toolkit
 * over MCP, and every runtime calls a profile's MCP servers through the runner, which fronts them. Each runtime runs
 * against the fake provider speaking its SDK's wire; the MCP server is a real MCP SDK server that logs its calls.
 */
let h: AgentsHarness;
let docs: TestMcpServer;
const api = (path: string, init?: Parameters<AgentsHarness['svc']['api']>[1]) => h.svc.api(path, init);

beforeAll(async () => {
  docs = await startMcpServer({ name: 'docs' });
  h = await startAgentsHarness({ ANTHROPIC_API_KEY: 'sk-ant-fake', OPENAI_API_KEY: 'sk-fake' });
});
afterAll(async () => {
  await h?.stop();
  await docs?.close();
});

async function profile(body: Record<string, unknown>): Promise<void> {
  const res = await api('/api/profiles', { method: 'POST', json: body });
  expect(res.status, await res.clone().text()).toBe(201);
}

async function start(profileName: string, prompt: string, sessionId?: string) {
  const res = await api('/api/runs', { method: 'POST', json: { profile: profileName, prompt, ...(sessionId ? { sessionId } : {}) } });
  expect(res.status).toBe(202);
  return (await res.json()) as { runId: string; sessionId: string };
}

/** The run's stream up to (and including) the first event of `type`; `rest()` reads it to its end (from its start). */
async function until(runId: string, type: string) {
  const upTo = await readUntil(await api(`/api/runs/${runId}/stream`), type);
  return { event: upTo.event, rest: async () => [...upTo.seen, ...(await upTo.rest())] };
}

const decide = (runId: string, approvalId: unknown, body: Record<string, unknown>) => api(`/api/runs/${runId}/approvals/${approvalId}`, { method: 'POST', json: body });

/** The tool results the model was sent (any wire), read from the fake provider's log. */
const toolResultsSeen = () => modelRequests(h.fake).map(lastInputOf).filter((i) => i?.kind === 'tool').map((i) => i!.text);

describe('a profile MCP server behind the runner, on the general runtime', () => {
  beforeAll(async () => {
    const mcpServers = [{ name: 'docs', url: docs.url, headers: { 'X-Team': 'blue' } }];
    await profile({ name: 'mcp-asker', runtime: 'general', model: 'openai-compatible:fake-model', mcpServers, permissions: { 'mcp:docs/*': 'ask', '*': 'allow' } });
    await profile({ name: 'mcp-denier', runtime: 'general', model: 'openai-compatible:fake-model', mcpServers, permissions: { 'mcp:docs/*': 'allow', 'mcp:docs/echo': 'deny' } });
  });

  it('refuses an mcp: selector for a server the profile does not have, and takes * deny beside its servers', async () => {
    const res = await api('/api/profiles', { method: 'POST', json: { name: 'bad', runtime: 'general', model: 'demo:echo', mcpServers: [{ name: 'docs', url: docs.url }], permissions: { 'mcp:github/*': 'ask' } } });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toBe("permissions.mcp:github/*: github is not one of the profile's MCP servers (docs)");
    await profile({ name: 'strict', runtime: 'general', model: 'demo:echo', mcpServers: [{ name: 'docs', url: docs.url }], permissions: { '*': 'deny', 'mcp:docs/echo': 'allow' } });
  });

  it('holds an mcp:docs/* call until a member approves it; the server gets the edited input, with the profile headers', async () => {
    const before = docs.calls.length;
    const { runId } = await start('mcp-asker', 'CALL_TOOL docs__echo {"message":"original"}');
    const { event, rest } = await until(runId, 'approval_required');
    expect(event).toMatchObject({ toolName: 'docs__echo', input: { message: 'original' }, approvalId: expect.stringMatching(/^apr_/) });
    expect((await (await api(`/api/runs/${runId}`)).json()).status).toBe('waiting');
    expect(docs.calls.length).toBe(before);

    expect((await decide(runId, event.approvalId, { decision: 'approve', input: { message: 'edited' } })).status).toBe(200);
    const events = await rest();
    expect(events.find((e) => e.type === 'approval_decided')).toMatchObject({ decision: 'approve', input: { message: 'edited' } });
    expect(events.find((e) => e.type === 'tool_result')).toMatchObject({ toolName: 'docs__echo', isError: false });
    expect(events.at(-1)).toMatchObject({ type: 'result', message: expect.stringContaining('TOOL-RESULT-SEEN: echo: edited') });
    expect(docs.calls.slice(before)).toEqual([{ name: 'echo', args: { message: 'edited' } }]);
    // the runner called the server with the profile's headers; the worker never held them
    expect(docs.extraHeaders.at(-1)).toMatchObject({ 'x-team': 'blue' });
  });

  it('never calls the server when a person denies the call, and the model reads why', async () => {
    const before = docs.calls.length;
    const { runId } = await start('mcp-asker', 'CALL_TOOL docs__echo {"message":"nope"}');
    const { event, rest } = await until(runId, 'approval_required');
    expect((await decide(runId, event.approvalId, { decision: 'deny', message: 'not that server' })).status).toBe(200);
    expect((await rest()).at(-1)).toMatchObject({ type: 'result', message: expect.stringContaining('tool docs__echo was not run: a person denied it: not that server') });
    expect(docs.calls.length).toBe(before);
  });

  it('notes a profile MCP server the runner cannot reach, and the run goes on without it', async () => {
    // a port nothing listens on any more
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await profile({ name: 'mcp-gone', runtime: 'general', model: 'openai-compatible:fake-model', mcpServers: [{ name: 'gone', url: `http://127.0.0.1:${port}/mcp` }] });
    const { runId } = await start('mcp-gone', 'hello');
    const events = await (await until(runId, 'progress')).rest();
    expect(events).toContainEqual(expect.objectContaining({ type: 'progress', message: `MCP server gone unavailable (cannot connect to 127.0.0.1:${port}: fetch failed (ECONNREFUSED)); continuing without it` }));
    expect(events.at(-1)).toMatchObject({ type: 'result', message: 'FAKE-REPLY: hello' });
  });

  it('never calls the server for a denied tool: the most specific mcp: selector wins', async () => {
    const before = docs.calls.length;
    const { runId } = await start('mcp-denier', 'CALL_TOOL docs__echo {"message":"blocked"}');
    const { rest } = await until(runId, 'tool_call');
    const events = await rest();
    expect(events.some((e) => e.type === 'approval_required')).toBe(false);
    expect(events.at(-1)).toMatchObject({ type: 'result', message: expect.stringContaining('tool docs__echo denied by the permission policy of profile mcp-denier (mcp:docs/echo: deny)') });
    expect(docs.calls.length).toBe(before);
  });
});

const SDK_RUNTIMES = [
  { runtime: 'runtime_a', model: 'claude-sonnet-4-5', toolkit: (tool: string) => `mcp__svc__${tool}`, mcp: (tool: string) => `mcp__docs__${tool}` },
  { runtime: 'runtime_b', model: 'gpt-5.5', toolkit: (tool: string) => `mcp__svc/${tool}`, mcp: (tool: string) => `mcp__docs/${tool}` },
] as const;

// the SDK runtimes launch native binaries per turn: a longer limit on a loaded machine
describe.each(SDK_RUNTIMES)('$runtime through the gate', { timeout: 120_000 }, ({ runtime, model, toolkit, mcp }) => {
  const name = (kind: string) => `${kind}-${runtime.replace('_', '-')}`;
  const write = (content: string) => `CALL_TOOL ${toolkit('fs_write')} {"path":"/work/note.txt","content":"${content}"}`;

  beforeAll(async () => {
    await profile({ name: name('asker'), runtime, model, tools: ['@files'], permissions: { fs_write: 'ask' } });
    await profile({ name: name('denier'), runtime, model, tools: ['@files'], mcpServers: [{ name: 'docs', url: docs.url }], permissions: { fs_write: 'deny', 'mcp:docs/*': 'deny' } });
    await profile({ name: name('mcp-asker'), runtime, model, tools: ['@files'], mcpServers: [{ name: 'docs', url: docs.url }], permissions: { 'mcp:docs/echo': 'ask' } });
  });

  it('holds a profile MCP server call under ask; approved with an edited input, the server gets that input', async () => {
    const before = docs.calls.length;
    const { runId } = await start(name('mcp-asker'), `CALL_TOOL ${mcp('echo')} {"message":"original"}`);
    const { event, rest } = await until(runId, 'approval_required');
    expect(event).toMatchObject({ toolName: 'docs__echo', input: { message: 'original' } });
    expect(docs.calls.length).toBe(before);
    expect((await decide(runId, event.approvalId, { decision: 'approve', input: { message: `edited on ${runtime}` } })).status).toBe(200);
    expect((await rest()).at(-1)).toMatchObject({ type: 'result' });
    expect(docs.calls.slice(before)).toEqual([{ name: 'echo', args: { message: `edited on ${runtime}` } }]);
    expect(toolResultsSeen().some((t) => t.includes(`echo: edited on ${runtime}`))).toBe(true);
  });

  it('holds a toolkit call under ask; approved with an edited input, the tool writes that input', async () => {
    const { runId, sessionId } = await start(name('asker'), write('original'));
    const { event, rest } = await until(runId, 'approval_required');
    expect(event).toMatchObject({ toolName: 'fs_write', input: { path: '/work/note.txt', content: 'original' } });
    expect((await (await api(`/api/runs/${runId}`)).json()).status).toBe('waiting');
    expect((await decide(runId, event.approvalId, { decision: 'approve', input: { path: '/work/note.txt', content: 'edited' } })).status).toBe(200);
    const events = await rest();
    expect(events.find((e) => e.type === 'tool_result')).toMatchObject({ isError: false });
    expect(events.at(-1)).toMatchObject({ type: 'result' });
    expect((await (await api(`/api/runs/${runId}`)).json()).status).toBe('ok');

    // what the tool wrote, read back by the next run of the session
    const read = await start(name('asker'), `CALL_TOOL ${toolkit('fs_read')} {"path":"/work/note.txt"}`, sessionId);
    const { rest: readRest } = await until(read.runId, 'tool_call');
    expect((await readRest()).at(-1)).toMatchObject({ type: 'result', message: expect.stringContaining('edited') });
  });

  it('never runs a call a person denied: the model reads the reason in the tool result', async () => {
    const { runId, sessionId } = await start(name('asker'), write('denied'));
    const { event, rest } = await until(runId, 'approval_required');
    expect((await decide(runId, event.approvalId, { decision: 'deny', message: `no writes on ${runtime}` })).status).toBe(200);
    const events = await rest();
    expect(events.find((e) => e.type === 'approval_decided')).toMatchObject({ decision: 'deny', reason: 'denied' });
    expect(events.at(-1)).toMatchObject({ type: 'result' });
    expect(toolResultsSeen().some((t) => t.includes(`tool fs_write was not run: a person denied it: no writes on ${runtime}`))).toBe(true);
    // nothing was written in this session
    const read = await start(name('asker'), `CALL_TOOL ${toolkit('fs_read')} {"path":"/work/note.txt"}`, sessionId);
    const { rest: readRest } = await until(read.runId, 'tool_call');
    expect((await readRest()).find((e) => e.type === 'tool_result')).toMatchObject({ isError: true });
  });

  it('never runs a deny tool, of the toolkit or of a profile MCP server: the model reads that the policy denied it', async () => {
    const before = docs.calls.length;
    const { runId } = await start(name('denier'), write('never'));
    const events = (await until(runId, 'tool_call').then((u) => u.rest()));
    expect(events.some((e) => e.type === 'approval_required')).toBe(false);
    expect(toolResultsSeen().some((t) => t.includes(`tool fs_write denied by the permission policy of profile ${name('denier')} (fs_write: deny)`))).toBe(true);

    const viaMcp = await start(name('denier'), `CALL_TOOL ${mcp('echo')} {"message":"never"}`);
    await (await until(viaMcp.runId, 'tool_call')).rest();
    expect(toolResultsSeen().some((t) => t.includes(`tool docs__echo denied by the permission policy of profile ${name('denier')} (mcp:docs/*: deny)`))).toBe(true);
    expect(docs.calls.length).toBe(before);
  });
});
