import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeProvider, modelRequests, type FakeProvider } from '../support/fake-provider.ts';
import { ofType, runBody, runToEnd, startTestWorker, type TestWorker } from '../support/worker.ts';

/**
 * The `general` runtime against a provider that misbehaves over real HTTP: one that goes silent after a delta with
 * the connection open ends the run with one error saying it stalled, within the configured stall timeout; a reset
 * mid-stream says so; a 429 with Retry-After is waited out and retried, and when retries run out the error names the
 * wait.
 */
const MODEL = 'openai-compatible:fake-model';
let fake: FakeProvider;
let worker: TestWorker;

beforeAll(async () => {
  fake = await startFakeProvider();
  worker = await startTestWorker({ modelStallTimeoutMs: 400, providerEnv: { OPENAI_COMPATIBLE_BASE_URL: fake.url, OPENAI_COMPATIBLE_API_KEY: 'x' } });
});
afterAll(async () => {
  await worker?.close();
  await fake?.close();
});

const terminals = (events: Array<{ type: string }>) => events.filter((e) => e.type === 'result' || e.type === 'error');

describe('model provider stalls and transient failures', () => {
  it('a provider silent after one delta ends the run with one error that says it stalled', async () => {
    const events = await runToEnd(worker.url, runBody('HANG_AFTER_FIRST please', { sessionId: 'sess-stall', model: MODEL }));
    expect(ofType(events, 'assistant').map((e) => e.message)).toContain('d0 ');
    expect(terminals(events)).toEqual([expect.objectContaining({ type: 'error', message: expect.stringMatching(/stalled: no output for 0\.4 s/) })]);
    // The worker hung up on the provider: nothing keeps the stalled call open.
    await fake.when(() => modelRequests(fake).find((r) => r.clientClosedEarly));
  });

  it('a reset mid-stream ends the run with one error that says the connection was lost', async () => {
    const events = await runToEnd(worker.url, runBody('RESET_AFTER_FIRST please', { sessionId: 'sess-reset', model: MODEL }));
    expect(terminals(events)).toEqual([expect.objectContaining({ type: 'error', message: expect.stringMatching(/connection .*lost mid-stream/) })]);
  });

  it('a 429 with Retry-After: 1 is waited out and retried, and the run succeeds', async () => {
    const before = modelRequests(fake).length;
    const events = await runToEnd(worker.url, runBody('FAIL_FIRST_1_HTTP_429_RETRY_AFTER_1 hello', { sessionId: 'sess-429', model: MODEL }));
    expect(terminals(events)).toEqual([expect.objectContaining({ type: 'result', message: expect.stringContaining('FAKE-REPLY') })]);
    expect(modelRequests(fake).length - before).toBe(2);
  });

  it('a 503 that never passes fails after the bounded retries, and the error names the wait', async () => {
    const events = await runToEnd(worker.url, runBody('FAIL_FIRST_9_HTTP_503_RETRY_AFTER_1 hello', { sessionId: 'sess-503', model: MODEL }));
    expect(terminals(events)).toEqual([expect.objectContaining({ type: 'error', message: expect.stringMatching(/HTTP 503.*after 3 attempts.*Retry-After: 1 s/) })]);
  }, 20_000);
});
