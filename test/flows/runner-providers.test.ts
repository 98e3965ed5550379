import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { configureLogging } from '../../src/shared/log.ts';
import { lastUserPrompt, modelRequests, startFakeProvider, type FakeProvider } from '../support/fake-provider.ts';
import { collect, runnerHarness, terminals, testDataDir, TENANT } from '../support/runner.ts';

configureLogging({ level: 'warn' });

/**
 * Runner → worker → fake provider over real HTTP, once per provider wire format of the general runtime: OpenAI
 * Responses (`openai`), Anthropic Messages (`anthropic`), Chat Completions (`openai-compatible`), Gemini
 * generateContent SSE (`google`) and the Bedrock Converse event stream (`bedrock`).
 */
let fake: FakeProvider;
const dataDir = testDataDir();
const { startWorker, startRunner, stopAll } = runnerHarness(() => fake);

beforeAll(async () => {
  fake = await startFakeProvider();
});
afterEach(() => stopAll());
afterAll(async () => {
  await fake.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const WIRES = [
  { provider: 'openai', wire: 'responses' },
  { provider: 'anthropic', wire: 'anthropic' },
  { provider: 'openai-compatible', wire: 'chat' },
  { provider: 'google', wire: 'gemini' },
  { provider: 'bedrock', wire: 'bedrock' },
] as const;

describe.each(WIRES)('runs through the runner on the $provider wire', ({ provider, wire }) => {
  const model = `${provider}:fake-model`;
  const setup = async () => {
    const w = await startWorker();
    const r = await startRunner({ workerUrl: w.url, dataDir });
    await r.client.putProfile(TENANT, { name: 'helper', runtime: 'general', model, systemPrompt: 'You help.' });
    return { ...r, worker: w, sessionId: await r.client.createSession(TENANT, 'helper') };
  };

  it('streams a text reply to one result', async () => {
    const { client, sessionId } = await setup();
    const events = await collect(await client.run(TENANT, { profile: 'helper', sessionId, prompt: `hello ${provider}` }));
    expect(events.filter((e) => e.type === 'assistant' && e.delta).length).toBeGreaterThan(0);
    expect(terminals(events)).toEqual([expect.objectContaining({ type: 'result', message: `FAKE-REPLY: hello ${provider}` })]);
    expect(modelRequests(fake).at(-1)?.wire).toBe(wire);
  });

  it('runs a tool call round trip through the session toolkit on the runner', async () => {
    const { client, sessionId } = await setup();
    const prompt = `CALL_TOOL fs_write {"path":"${provider}.txt","content":"from ${provider}"}`;
    const events = await collect(await client.run(TENANT, { profile: 'helper', sessionId, prompt }));
    expect(events.find((e) => e.type === 'tool_call')).toMatchObject({ toolName: 'fs_write', input: { path: `${provider}.txt` } });
    expect(events.find((e) => e.type === 'tool_result')).toMatchObject({ toolName: 'fs_write', isError: false });
    expect(readFileSync(join(dataDir, 'sessions', sessionId, 'work', `${provider}.txt`), 'utf8')).toBe(`from ${provider}`);
    expect(terminals(events)).toEqual([expect.objectContaining({ type: 'result', message: expect.stringContaining('TOOL-RESULT-SEEN') })]);
  });

  it('ends a provider 500 with exactly one terminal error', async () => {
    const { client, sessionId } = await setup();
    const events = await collect(await client.run(TENANT, { profile: 'helper', sessionId, prompt: 'FAIL_HTTP_500' }));
    expect(terminals(events)).toEqual([expect.objectContaining({ type: 'error', message: expect.stringMatching(/500/) })]);
    expect(events.at(-1)?.type).toBe('error');
  });

  it('cancels the model call when the caller aborts the run', async () => {
    const { client, sessionId } = await setup();
    const controller = new AbortController();
    const prompt = `SLOW_DELTAS 1000 40 ${provider}`;
    const events = await client.run(TENANT, { profile: 'helper', sessionId, prompt }, controller.signal);
    const seen: string[] = [];
    for await (const e of events) {
      seen.push(e.type);
      if (e.type === 'assistant') controller.abort();
    }
    expect(seen.filter((t) => t === 'result' || t === 'error')).toEqual(['error']);
    const closed = await fake.when(() => modelRequests(fake).find((r) => r.clientClosedEarly && lastUserPrompt(r) === prompt));
    expect(closed.wire).toBe(wire);
  });

  it('carries the conversation to a second runner and worker through state export and hydrate', async () => {
    const a = await setup();
    await collect(await a.client.run(TENANT, { profile: 'helper', sessionId: a.sessionId, prompt: `remember ${provider} kumquat` }));
    const bundle = (await a.client.exportState(TENANT, a.sessionId))!;
    const w = await startWorker();
    const b = await startRunner({ workerUrl: w.url, dataDir });
    await b.client.putProfile(TENANT, { name: 'helper', runtime: 'general', model });
    await b.client.hydrate(TENANT, a.sessionId, { profileName: 'helper', runtimeSessionId: bundle.runtimeSessionId, stateContentType: bundle.contentType, stateB64: Buffer.from(bundle.bytes).toString('base64') });
    const events = await collect(await b.client.run(TENANT, { profile: 'helper', sessionId: a.sessionId, prompt: 'which fruit?' }));
    expect(events.at(-1)).toMatchObject({ type: 'result', message: 'FAKE-REPLY: which fruit?' });
    expect(JSON.stringify(modelRequests(fake).at(-1)?.body)).toContain(`remember ${provider} kumquat`);
  });
});
