import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../contracts/run-event.ts';
import { configureLogging } from '../../shared/log.ts';
import { readNdjson } from '../../shared/ndjson.ts';
import { startFakeProvider, modelRequests, lastUserPrompt, type FakeProvider, type Wire } from '../../../test/support/fake-provider.ts';
import { startMcpServer, type TestMcpServer } from '../../../test/support/mcp-server.ts';
import { processesMentioning, waitForNoProcesses } from '../../../test/support/proc-table.ts';
import { startTestWorker, runBody, runToEnd, postRun, ofType, deltaText, exportState, importState, type TestWorker } from '../../../test/support/worker.ts';
import { packTar } from './runtimes/bundle/tar.ts';

configureLogging({ level: 'warn' });

/**
 * runtime_a (Claude Code) and runtime_b (Codex) for real: the SDKs spawn their native binaries against the fake
 * provider over HTTP, with the session toolkit served by a real MCP server. The same user-visible behaviour is
 * asserted for both; the table holds what differs.
 */
interface RuntimeCase {
  runtime: 'runtime_a' | 'runtime_b';
  wire: Wire;
  model: string;
  /** The header in which the runtime tells the provider its session id. */
  sessionHeader: string;
  binary: string;
  toolPrompt: string;
  /** Codex prefixes tool output with timing lines before the model sees it. */
  toolResultSeen: RegExp;
  failPrompt: string;
  failMessage: RegExp;
  /** Claude Code streams text deltas; Codex only has whole agent messages. */
  streamsDeltas: boolean;
}

const CASES: RuntimeCase[] = [
  {
    runtime: 'runtime_a', wire: 'anthropic', model: 'claude-sonnet-4-5', sessionHeader: 'x-claude-code-session-id', binary: 'claude',
    toolPrompt: 'CALL_TOOL mcp__svc__echo {"message":"hi"}', toolResultSeen: /^TOOL-RESULT-SEEN: echo: hi$/,
    failPrompt: 'please FAIL_HTTP_500 now', failMessage: /500 fake provider failure/, streamsDeltas: true,
  },
  {
    runtime: 'runtime_b', wire: 'responses', model: 'gpt-5.5', sessionHeader: 'session-id', binary: 'codex',
    toolPrompt: 'CALL_TOOL mcp__svc/echo {"message":"hi"}', toolResultSeen: /^TOOL-RESULT-SEEN: [\s\S]*echo: hi$/,
    failPrompt: 'please FAIL_HTTP_400 now', failMessage: /fake provider failure \(HTTP 400\)/, streamsDeltas: false,
  },
];

// The SDK runtimes launch native binaries per turn: a longer limit than the suite default for loaded machines, and
// one retry for the rare third-party child that stalls at start-up under parallel load (see worker.sdk-isolation).
describe.each(CASES)('the $runtime runtime against the fake provider', { timeout: 90_000, retry: 1 }, (rt) => {
  let fake: FakeProvider;
  let mcp: TestMcpServer;
  let root: string;
  const workers: TestWorker[] = [];
  let seq = 0;
  const newSession = () => `sess-${rt.runtime}-${++seq}`;
  const body = (prompt: string, sessionId: string) => runBody(prompt, { sessionId, model: rt.model, sessionMcpUrl: mcp.url, profile: { runtime: rt.runtime } });
  const start = async (extra: Parameters<typeof startTestWorker>[0] = {}) => {
    const stateDir = mkdtempSync(join(root, 'worker-'));
    const w = await startTestWorker({
      mode: rt.runtime,
      stateDir,
      providerEnv: { ANTHROPIC_API_KEY: 'sk-ant-fake', ANTHROPIC_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-fake', OPENAI_BASE_URL: fake.url },
      ...extra,
    });
    workers.push(w);
    return { ...w, stateDir };
  };

  beforeAll(async () => {
    fake = await startFakeProvider();
    // the runner's session endpoint answers only URLs with the session token: the runtimes must keep the query
    mcp = await startMcpServer({ sessionToken: 'payload.signature-of-the-session' });
    root = mkdtempSync(join(tmpdir(), `svc-${rt.runtime}-`));
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.close()));
  });
  afterAll(async () => {
    await Promise.all([fake.close(), mcp.close()]);
    rmSync(root, { recursive: true, force: true });
  });

  it('answers a text turn with its session id, the text, usage and the result', async () => {
    const w = await start();
    const sessionId = newSession();
    const events = await runToEnd(w.url, body('hello there friend', sessionId));

    const session = ofType(events, 'session');
    expect(session).toEqual([expect.objectContaining({ runtimeSessionId: expect.stringMatching(/^[0-9a-f-]{36}$/) })]);
    expect(deltaText(events)).toBe('FAKE-REPLY: hello there friend');
    if (rt.streamsDeltas) expect(ofType(events, 'assistant').filter((e) => e.delta).length).toBeGreaterThan(1);
    expect(ofType(events, 'assistant').filter((e) => !e.delta).map((e) => e.message)).toEqual(['FAKE-REPLY: hello there friend']);
    expect(ofType(events, 'usage')).toEqual([expect.objectContaining({ usage: expect.objectContaining({ inputTokens: 12, cacheReadTokens: 4 }) })]);
    expect(events.at(-1)).toMatchObject({ type: 'result', message: 'FAKE-REPLY: hello there friend' });

    const request = modelRequests(fake).at(-1)!;
    expect(request.wire).toBe(rt.wire);
    expect(request.headers[rt.sessionHeader]).toBe(session[0].runtimeSessionId);
    // Each session keeps its runtime state in its own folder under the worker's state dir.
    expect(statSync(join(w.stateDir, rt.runtime, sessionId, 'config')).isDirectory()).toBe(true);
  });

  it('calls a session MCP tool and feeds its result back to the model', async () => {
    const w = await start();
    const before = mcp.calls.length;
    const events = await runToEnd(w.url, body(rt.toolPrompt, newSession()));

    const [call] = ofType(events, 'tool_call');
    expect(call).toMatchObject({ toolName: 'echo', input: { message: 'hi' } });
    expect(ofType(events, 'tool_result')).toEqual([
      expect.objectContaining({ toolCallId: call.toolCallId, toolName: 'echo', isError: false, output: expect.objectContaining({ content: [{ type: 'text', text: 'echo: hi' }] }) }),
    ]);
    expect(mcp.calls.slice(before)).toEqual([{ name: 'echo', args: { message: 'hi' } }]);
    expect(events.at(-1)?.type).toBe('result');
    expect(events.at(-1)?.message).toMatch(rt.toolResultSeen);
  });

  it("connects a tenant's MCP server through the address policy: with deny, one on an internal address is never reached", async () => {
    const tenant = await startMcpServer({ name: 'tenant-mcp' });
    try {
      const prompt = rt.toolPrompt.replace('mcp__svc', 'mcp__docs');
      const withDocs = (sessionId: string) => ({ ...body(prompt, sessionId), mcpServers: [{ name: 'docs', transport: 'http', url: tenant.url }] });
      // allow (the dev default): the CLI calls the tenant's tool, so the server would see any connection
      const allowed = await runToEnd((await start()).url, withDocs(newSession()));
      expect(tenant.calls).toEqual([{ name: 'echo', args: { message: 'hi' } }]);
      expect(allowed.at(-1)?.type).toBe('result');
      // deny: the CLI gets a forwarder whose connection the policy refuses; the run still ends once
      const seen = tenant.methods.length;
      const denied = await runToEnd((await start({ privateAddresses: 'deny' })).url, withDocs(newSession()));
      expect(tenant.methods.length).toBe(seen);
      expect(denied.filter((e) => e.type === 'result' || e.type === 'error')).toHaveLength(1);
    } finally {
      await tenant.close();
    }
  });

  it('ends a provider failure in exactly one terminal error, and the session goes on', async () => {
    const w = await start();
    const sessionId = newSession();
    const events = await runToEnd(w.url, body(rt.failPrompt, sessionId));

    const terminals = events.filter((e) => e.type === 'result' || e.type === 'error');
    expect(terminals).toHaveLength(1);
    expect(events.at(-1)).toBe(terminals[0]);
    expect(terminals[0].type).toBe('error');
    expect(terminals[0].message).toMatch(rt.failMessage);
    expect(ofType(events, 'assistant')).toEqual([]); // the SDK's synthetic "API Error" text is not an answer

    const next = await runToEnd(w.url, body('after the failure', sessionId));
    expect(next.at(-1)).toMatchObject({ type: 'result', message: 'FAKE-REPLY: after the failure' });
    expect(ofType(next, 'session')[0].runtimeSessionId).toBe(ofType(events, 'session')[0].runtimeSessionId);
  });

  it('stops the child process when the client hangs up mid-turn', async () => {
    const w = await start();
    const prompt = `SLOW_DELTAS 1000 50 ${rt.runtime}-cancel`;
    const abort = new AbortController();
    const res = await postRun(w.url, body(prompt, newSession()), abort.signal);
    const events = readNdjson<RunEvent>(res.body!)[Symbol.asyncIterator]();
    await events.next(); // the run has started streaming
    await fake.when(() => modelRequests(fake).find((r) => lastUserPrompt(r) === prompt));
    const children = processesMentioning(w.stateDir);
    expect(children.map((p) => p.command).join('\n')).toContain(rt.binary);

    abort.abort();
    await fake.when(() => modelRequests(fake).find((r) => r.clientClosedEarly && lastUserPrompt(r) === prompt));
    expect(await waitForNoProcesses(w.stateDir)).toEqual([]);
    expect((await (await fetch(`${w.url}/health`)).json()).inflight).toBe(0);
  });

  it('resumes an exported session in a fresh worker, sending the earlier history', async () => {
    const first = await start();
    const sessionId = newSession();
    const earlier = await runToEnd(first.url, body('remember the word pineapple', sessionId));
    const runtimeSessionId = ofType(earlier, 'session')[0].runtimeSessionId;
    const exported = await exportState(first.url, sessionId);
    expect(exported.status).toBe(200);
    expect(exported.headers.get('content-type')).toBe('application/gzip');
    expect(exported.headers.get('x-runtime-session-id')).toBe(runtimeSessionId);
    const bundle = new Uint8Array(await exported.arrayBuffer());

    const second = await start();
    expect(second.stateDir).not.toBe(first.stateDir);
    expect((await importState(second.url, sessionId, bundle)).status).toBe(204);
    const events = await runToEnd(second.url, body('what was the word?', sessionId));

    expect(ofType(events, 'session')[0].runtimeSessionId).toBe(runtimeSessionId);
    expect(events.at(-1)).toMatchObject({ type: 'result', message: 'FAKE-REPLY: what was the word?' });
    const request = modelRequests(fake).at(-1)!;
    expect(lastUserPrompt(request)).toBe('what was the word?');
    expect(JSON.stringify(request.body)).toContain('remember the word pineapple');
    expect(JSON.stringify(request.body)).toContain('FAKE-REPLY: remember the word pineapple');
    // Codex counts tokens for the whole thread; the usage event still counts only this turn.
    expect(ofType(events, 'usage')[0].usage).toMatchObject({ inputTokens: 12 });
  });

  const tarGz = (path: string) => gzipSync(packTar([{ path, data: new TextEncoder().encode('{}\n') }]));
  it.each([
    ['bytes that are not gzip', () => new TextEncoder().encode('not a bundle'), /not a gzip stream/],
    ['gzip that is not a tar', () => gzipSync('just text'), /not a valid tar archive/],
    ['an entry escaping the state folder', () => tarGz('../../escape.jsonl'), /not a clean relative path/],
    ['entries that are not session state', () => tarGz('notes/readme.txt'), /unexpected entry/],
  ])('refuses %s with a 400 and leaves the session unseeded', async (_label, make, pattern) => {
    const w = await start();
    const sessionId = newSession();
    const res = await importState(w.url, sessionId, make());
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(pattern);
    expect((await exportState(w.url, sessionId)).status).toBe(404);
  });
});
