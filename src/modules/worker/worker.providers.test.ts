import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readNdjson } from '../../shared/ndjson.ts';
import { configureLogging } from '../../shared/log.ts';
import type { RunEvent } from '../../contracts/run-event.ts';
import { startFakeProvider, modelRequests, lastInputOf, lastUserPrompt, type FakeProvider, type Wire } from '../../../test/support/fake-provider.ts';
import { startMcpServer, type TestMcpServer } from '../../../test/support/mcp-server.ts';
import { startTestWorker, runBody, runToEnd, postRun, ofType, deltaText, exportState, importState, type TestWorker } from '../../../test/support/worker.ts';

configureLogging({ level: 'warn' });

/**
 * The `general` runtime over real HTTP against the fake provider, once per provider, each on its own wire: its base
 * URL variable points at the fake, its key variable must reach the wire in the provider's own header.
 */
interface ProviderCase {
  provider: string;
  wire: Wire;
  env: (fake: FakeProvider) => Record<string, string>;
  /** The request headers that carry the key, as the provider's API expects them. */
  auth: Record<string, unknown>;
  /** Tokens read from the cache, as the package reports them from the fake's usage (0 where it does not read them). */
  cacheRead: number;
}
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const PROVIDERS: ProviderCase[] = [
  { provider: 'openai', wire: 'responses', env: (f) => ({ OPENAI_API_KEY: 'sk-fake', OPENAI_BASE_URL: f.url }), auth: bearer('sk-fake'), cacheRead: 4 },
  { provider: 'anthropic', wire: 'anthropic', env: (f) => ({ ANTHROPIC_API_KEY: 'sk-ant-fake', ANTHROPIC_BASE_URL: f.url }), auth: { 'x-api-key': 'sk-ant-fake' }, cacheRead: 4 },
  { provider: 'openai-compatible', wire: 'chat', env: (f) => ({ OPENAI_COMPATIBLE_BASE_URL: f.url, OPENAI_COMPATIBLE_API_KEY: 'fake' }), auth: bearer('fake'), cacheRead: 4 },
  { provider: 'google', wire: 'gemini', env: (f) => ({ GOOGLE_GENERATIVE_AI_API_KEY: 'g-fake', GOOGLE_GENERATIVE_AI_BASE_URL: `${f.origin}/v1beta` }), auth: { 'x-goog-api-key': 'g-fake' }, cacheRead: 4 },
  {
    provider: 'bedrock',
    wire: 'bedrock',
    env: (f) => ({ AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'AKIAFAKE', AWS_SECRET_ACCESS_KEY: 'fake-secret', AWS_ENDPOINT_URL_BEDROCK_RUNTIME: f.origin }),
    auth: { authorization: expect.stringMatching(/^AWS4-HMAC-SHA256 Credential=AKIAFAKE\/\d{8}\/us-east-1\/bedrock\//) },
    cacheRead: 4,
  },
  { provider: 'azure', wire: 'responses', env: (f) => ({ AZURE_API_KEY: 'az-fake', AZURE_BASE_URL: `${f.origin}/openai` }), auth: { 'api-key': 'az-fake' }, cacheRead: 4 },
  { provider: 'mistral', wire: 'chat', env: (f) => ({ MISTRAL_API_KEY: 'mistral-fake', MISTRAL_BASE_URL: f.url }), auth: bearer('mistral-fake'), cacheRead: 4 },
  { provider: 'xai', wire: 'responses', env: (f) => ({ XAI_API_KEY: 'xai-fake', XAI_BASE_URL: f.url }), auth: bearer('xai-fake'), cacheRead: 4 },
  { provider: 'groq', wire: 'chat', env: (f) => ({ GROQ_API_KEY: 'gsk-fake', GROQ_BASE_URL: f.url }), auth: bearer('gsk-fake'), cacheRead: 4 },
  { provider: 'openrouter', wire: 'chat', env: (f) => ({ OPENROUTER_API_KEY: 'sk-or-fake', OPENROUTER_BASE_URL: f.url }), auth: bearer('sk-or-fake'), cacheRead: 4 },
];

describe.each(PROVIDERS)('the general runtime with $provider ($wire wire)', ({ provider, wire, env, auth, cacheRead }) => {
  let fake: FakeProvider;
  let mcp: TestMcpServer;
  const workers: TestWorker[] = [];
  const model = `${provider}:fake-model`;
  const start = async () => {
    const w = await startTestWorker({ providerEnv: env(fake) });
    workers.push(w);
    return w;
  };
  let sessionSeq = 0;
  const newSession = () => `sess-${provider}-${++sessionSeq}`;

  beforeAll(async () => {
    fake = await startFakeProvider();
    mcp = await startMcpServer();
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.close()));
  });
  afterAll(async () => {
    await fake.close();
    await mcp.close();
  });

  it('streams a text turn as deltas, then the whole text, usage and the result', async () => {
    const w = await start();
    const events = await runToEnd(w.url, runBody('hello there friend', { model, sessionId: newSession(), sessionMcpUrl: mcp.url }));

    expect(events[0]).toMatchObject({ type: 'session' });
    expect(ofType(events, 'assistant').filter((e) => e.delta).length).toBeGreaterThan(1);
    expect(deltaText(events)).toBe('FAKE-REPLY: hello there friend');
    expect(ofType(events, 'assistant').find((e) => !e.delta)?.message).toBe('FAKE-REPLY: hello there friend');
    // the fake answers 4 deltas, 4 output tokens, 12 input tokens of which 4 from the cache (and 2 written to it)
    expect(ofType(events, 'usage')).toEqual([expect.objectContaining({ usage: expect.objectContaining({ inputTokens: expect.any(Number), outputTokens: 4, cacheReadTokens: cacheRead }) })]);
    expect(ofType(events, 'usage')[0].usage?.inputTokens).toBeGreaterThanOrEqual(12);
    expect(events.at(-1)).toMatchObject({ type: 'result', message: 'FAKE-REPLY: hello there friend' });
    const request = modelRequests(fake).at(-1)!;
    expect(request.wire).toBe(wire);
    expect(request.headers).toMatchObject(auth);
  });

  it('calls a session MCP tool and feeds its result back to the model', async () => {
    const w = await start();
    const before = modelRequests(fake).length;
    const events = await runToEnd(w.url, runBody('CALL_TOOL echo {"message":"hi"}', { model, sessionId: newSession(), sessionMcpUrl: mcp.url }));

    expect(ofType(events, 'tool_call')).toEqual([expect.objectContaining({ toolName: 'echo', input: { message: 'hi' } })]);
    const [toolResult] = ofType(events, 'tool_result');
    expect(toolResult).toMatchObject({ toolName: 'echo', isError: false, toolCallId: ofType(events, 'tool_call')[0].toolCallId });
    expect(toolResult.output).toMatchObject({ content: [{ type: 'text', text: 'echo: hi' }] });
    expect(events.at(-1)).toMatchObject({ type: 'result', message: 'TOOL-RESULT-SEEN: echo: hi' });

    const calls = modelRequests(fake).slice(before);
    expect(calls).toHaveLength(2);
    expect(lastInputOf(calls[1])).toEqual({ kind: 'tool', text: 'echo: hi' });
  });

  it('ends a provider 500 with exactly one error naming the status, and keeps the prompt once', async () => {
    const w = await start();
    const sessionId = newSession();
    await runToEnd(w.url, runBody('first turn', { model, sessionId, sessionMcpUrl: mcp.url }));
    const events = await runToEnd(w.url, runBody('please FAIL_HTTP_500 now', { model, sessionId, sessionMcpUrl: mcp.url }));

    const terminals = events.filter((e) => e.type === 'result' || e.type === 'error');
    expect(terminals).toHaveLength(1);
    expect(events.at(-1)?.type).toBe('error');
    expect(events.at(-1)?.message).toContain('500');

    const history = (await (await exportState(w.url, sessionId)).json()) as Array<{ role: string; content: unknown }>;
    const failed = history.filter((m) => m.role === 'user' && JSON.stringify(m.content).includes('FAIL_HTTP_500'));
    expect(failed).toHaveLength(1);
    expect(history.at(-1)).toEqual(failed[0]);
    expect(history.filter((m) => m.role === 'user')).toHaveLength(2);
  });

  it('commits the completed tool step when the model fails after the tool ran', async () => {
    const w = await start();
    const sessionId = newSession();
    const events = await runToEnd(w.url, runBody('CALL_TOOL echo {"message":"FAIL_HTTP_503"}', { model, sessionId, sessionMcpUrl: mcp.url }));

    expect(ofType(events, 'tool_result')).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ type: 'error' });
    expect(events.at(-1)?.message).toContain('503');
    const history = (await (await exportState(w.url, sessionId)).json()) as Array<{ role: string }>;
    expect(history.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
  });

  it('aborts the model call when the client disconnects mid-stream', async () => {
    const w = await start();
    const abort = new AbortController();
    const res = await postRun(w.url, runBody('SLOW_DELTAS 1000 50', { model, sessionId: newSession(), sessionMcpUrl: mcp.url }), abort.signal);
    const seen: RunEvent[] = [];
    for await (const event of readNdjson<RunEvent>(res.body!)) {
      seen.push(event);
      if (event.type === 'assistant' && event.delta) break;
    }
    abort.abort();

    const closed = await fake.when(() => modelRequests(fake).find((r) => r.clientClosedEarly && lastUserPrompt(r) === 'SLOW_DELTAS 1000 50'));
    expect(closed.wire).toBe(wire);
    expect(seen.at(-1)).toMatchObject({ type: 'assistant', message: 'd0 ' });
    const health = await (await fetch(`${w.url}/health`)).json();
    expect(health.inflight).toBe(0);
  });

  it('carries exported history into a new worker instance', async () => {
    const first = await start();
    const sessionId = newSession();
    await runToEnd(first.url, runBody('remember the word pineapple', { model, sessionId, sessionMcpUrl: mcp.url }));
    const exported = await exportState(first.url, sessionId);
    expect(exported.status).toBe(200);
    expect(exported.headers.get('content-type')).toContain('application/json');
    expect(exported.headers.get('x-runtime-session-id')).toBe(sessionId);
    const bundle = await exported.text();

    const second = await start();
    expect(second.url).not.toBe(first.url);
    expect((await importState(second.url, sessionId, bundle)).status).toBe(204);
    const events = await runToEnd(second.url, runBody('what was the word?', { model, sessionId, sessionMcpUrl: mcp.url }));

    expect(events.at(-1)).toMatchObject({ type: 'result', message: 'FAKE-REPLY: what was the word?' });
    const request = modelRequests(fake).at(-1)!;
    expect(lastUserPrompt(request)).toBe('what was the word?');
    expect(JSON.stringify(request.body)).toContain('remember the word pineapple');
  });
});

describe('the general runtime with openai', () => {
  let fake: FakeProvider;
  let mcp: TestMcpServer;
  let w: TestWorker;
  beforeAll(async () => {
    fake = await startFakeProvider();
    mcp = await startMcpServer();
    w = await startTestWorker({ providerEnv: { OPENAI_API_KEY: 'sk-fake', OPENAI_BASE_URL: fake.url } });
  });
  afterAll(async () => {
    await Promise.all([w.close(), fake.close(), mcp.close()]);
  });

  it('sends history in full with store off, so a bundle never depends on items kept on OpenAI\'s side', async () => {
    const sessionId = 'sess-openai-store';
    const model = 'openai:fake-model';
    await runToEnd(w.url, runBody('CALL_TOOL echo {"message":"kept"}', { model, sessionId, sessionMcpUrl: mcp.url }));
    await runToEnd(w.url, runBody('and now?', { model, sessionId, sessionMcpUrl: mcp.url }));

    const body = modelRequests(fake).at(-1)!.body;
    expect(body.store).toBe(false);
    expect(body.input.filter((item: any) => item.type === 'item_reference')).toEqual([]);
    expect(body.input).toEqual(expect.arrayContaining([
      expect.objectContaining({ type: 'function_call', name: 'echo' }),
      expect.objectContaining({ role: 'assistant', content: 'TOOL-RESULT-SEEN: echo: kept' }),
    ]));
  });
});

describe('the general runtime with bedrock on a Bedrock API key', () => {
  let fake: FakeProvider;
  let w: TestWorker;
  beforeAll(async () => {
    fake = await startFakeProvider();
    w = await startTestWorker({ providerEnv: { AWS_BEARER_TOKEN_BEDROCK: 'bedrock-api-key', AWS_ENDPOINT_URL_BEDROCK_RUNTIME: fake.origin } });
  });
  afterAll(async () => {
    await Promise.all([w.close(), fake.close()]);
  });

  it('sends the key as a bearer token instead of signing, to the model path of a model id with colons', async () => {
    const model = 'bedrock/us.anthropic.claude-sonnet-4-5-v1:0';
    const events = await runToEnd(w.url, runBody('hello bedrock', { model, sessionId: 'sess-bedrock-key' }));
    expect(events.at(-1)).toMatchObject({ type: 'result', message: 'FAKE-REPLY: hello bedrock' });
    const request = modelRequests(fake).at(-1)!;
    expect(request).toMatchObject({ wire: 'bedrock', path: '/model/us.anthropic.claude-sonnet-4-5-v1%3A0/converse-stream', headers: { authorization: 'Bearer bedrock-api-key' } });
    expect(request.headers['x-amz-date']).toBeUndefined();
  });
});

describe('model settings of a run (the /v1 agent reasoning and service_tier)', () => {
  let fake: FakeProvider;
  let mcp: TestMcpServer;
  let w: TestWorker;
  beforeAll(async () => {
    fake = await startFakeProvider();
    mcp = await startMcpServer();
    w = await startTestWorker({ providerEnv: { OPENAI_API_KEY: 'sk-fake', OPENAI_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'sk-ant-fake', ANTHROPIC_BASE_URL: fake.url } });
  });
  afterAll(async () => {
    await w?.close();
    await fake?.close();
    await mcp?.close();
  });
  const reasoningText = (events: RunEvent[]) => ofType(events, 'thinking').map((e) => e.message).join('');
  const parts = (events: RunEvent[]) => [...new Set(ofType(events, 'thinking').map((e) => e.partId))];

  it('sends effort, summary and service tier on the Responses wire and streams the summary as reasoning events', async () => {
    const body = { ...runBody('think first', { model: 'openai:gpt-5', sessionId: 'sess-reason-1', sessionMcpUrl: mcp.url }), modelOverride: { model: 'openai:gpt-5', reasoningEffort: 'high', reasoningSummary: 'auto', serviceTier: 'flex' } };
    const events = await runToEnd(w.url, body);
    const request = modelRequests(fake).at(-1)!;
    expect(request.body).toMatchObject({ reasoning: { effort: 'high', summary: 'auto' }, service_tier: 'flex' });
    expect(reasoningText(events)).toBe('Reading the prompt closely. Planning a short reply.');
    expect(parts(events)).toHaveLength(2);
    expect(events.findIndex((e) => e.type === 'thinking')).toBeLessThan(events.findIndex((e) => e.type === 'assistant'));
    expect(events.at(-1)).toMatchObject({ type: 'result', message: 'FAKE-REPLY: think first' });
    // the next turn replays the reasoning item (encrypted, store:false) and still answers
    const next = await runToEnd(w.url, { ...body, subtask: { title: 't', prompt: 'again' } });
    expect(next.at(-1)).toMatchObject({ type: 'result', message: 'FAKE-REPLY: again' });
  });

  it('asks Anthropic for extended thinking from the effort and streams the thinking as reasoning events', async () => {
    const body = { ...runBody('think hard', { model: 'anthropic:claude-sonnet-4-5', sessionId: 'sess-reason-2', sessionMcpUrl: mcp.url }), modelOverride: { model: 'anthropic:claude-sonnet-4-5', reasoningEffort: 'high' } };
    const events = await runToEnd(w.url, body);
    expect(modelRequests(fake).at(-1)!.body).toMatchObject({ thinking: { type: 'enabled' } });
    expect(reasoningText(events)).toBe('Reading the prompt closely. Planning a short reply.');
    expect(parts(events)).toHaveLength(2);
    expect(events.at(-1)).toMatchObject({ type: 'result', message: 'FAKE-REPLY: think hard' });
  });

  it('sends none of them when the run has no settings', async () => {
    await runToEnd(w.url, runBody('plain', { model: 'openai:gpt-5', sessionId: 'sess-reason-3', sessionMcpUrl: mcp.url }));
    const request = modelRequests(fake).at(-1)!;
    expect(request.body.reasoning?.summary).toBeUndefined();
    expect(request.body.service_tier).toBeUndefined();
  });
});

describe('the models a worker keeps between runs', () => {
  let fake: FakeProvider;
  let w: TestWorker;
  beforeAll(async () => {
    fake = await startFakeProvider();
    w = await startTestWorker({ providerEnv: { OPENAI_COMPATIBLE_BASE_URL: fake.url, OPENAI_COMPATIBLE_API_KEY: 'worker-key' } });
  });
  afterAll(async () => {
    await Promise.all([w?.close(), fake?.close()]);
  });

  it("calls the provider with a run's own key when it brings one, and with the worker's before and after", async () => {
    const model = 'openai-compatible:fake-model';
    const keyOf = async (sessionId: string, modelOverride?: { model?: string; apiKey: string }) => {
      const events = await runToEnd(w.url, { ...runBody('hello', { model, sessionId }), ...(modelOverride ? { modelOverride } : {}) });
      expect(events.at(-1)).toMatchObject({ type: 'result' });
      return modelRequests(fake).at(-1)!.headers.authorization;
    };
    expect(await keyOf('sess-keys-1')).toBe('Bearer worker-key');
    expect(await keyOf('sess-keys-2', { model, apiKey: 'tenant-key' })).toBe('Bearer tenant-key');
    expect(await keyOf('sess-keys-3')).toBe('Bearer worker-key');
    expect(await keyOf('sess-keys-4', { model, apiKey: 'other-tenant-key' })).toBe('Bearer other-tenant-key');
    // a key alone (a tenant's own key for the profile's model, on /api): the profile's model, the run's key
    expect(await keyOf('sess-keys-5', { apiKey: 'key-only' })).toBe('Bearer key-only');
    expect(modelRequests(fake).at(-1)!.body.model).toBe('fake-model');
  });
});
