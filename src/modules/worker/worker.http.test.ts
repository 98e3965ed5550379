import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configureLogging } from '../../shared/log.ts';
import { readNdjson } from '../../shared/ndjson.ts';
import type { RunEvent } from '../../contracts/run-event.ts';
import { startTestWorker, runBody, runToEnd, postRun, ofType, deltaText, type TestWorker } from '../../../test/support/worker.ts';

configureLogging({ level: 'warn' });

describe('the worker HTTP surface', () => {
  let w: TestWorker;
  beforeAll(async () => {
    w = await startTestWorker({ mode: 'general' });
  });
  afterAll(async () => {
    await w.close();
  });

  it('reports health with process facts and a fixed instance header on both paths', async () => {
    const a = await fetch(`${w.url}/health`);
    const b = await fetch(`${w.url}/healthz`);
    const body = await a.json();
    expect(body).toMatchObject({ ok: true, runtime: 'general', pid: process.pid, inflight: 0, nodeVersion: process.version });
    expect(body.memory).toEqual({ rssBytes: expect.any(Number), heapUsedBytes: expect.any(Number), heapTotalBytes: expect.any(Number), externalBytes: expect.any(Number) });
    expect(body.cpu).toEqual({ userMicros: expect.any(Number), systemMicros: expect.any(Number) });
    expect(new Date(body.startedAt).toISOString()).toBe(body.startedAt);
    expect(a.headers.get('x-svc-worker-instance')).toBe(body.instanceId);
    expect(b.headers.get('x-svc-worker-instance')).toBe(body.instanceId);
    expect((await b.json()).instanceId).toBe(body.instanceId);
  });

  it('answers the demo model with no key and no network', async () => {
    const res = await postRun(w.url, runBody('hello world'));
    expect(res.headers.get('content-type')).toContain('application/x-ndjson');
    expect(res.headers.get('x-svc-worker-instance')).toMatch(/^wrk_/);
    expect(res.headers.get('x-svc-worker-inflight')).toBe('1');
    const events: RunEvent[] = [];
    for await (const event of readNdjson<RunEvent>(res.body!)) events.push(event);
    expect(events[0]).toMatchObject({ type: 'session', runtimeSessionId: 'sess-test-1' });
    expect(deltaText(events)).toBe('demo reply: hello world');
    expect(events.at(-1)).toMatchObject({ type: 'result', message: 'demo reply: hello world' });
  });

  it('says the session toolkit is unavailable and still finishes the run', async () => {
    const events = await runToEnd(w.url, runBody('no tools here', { sessionId: 'sess-no-mcp' }));
    expect(ofType(events, 'progress').map((e) => e.message).join(' ')).toMatch(/session toolkit unavailable/);
    expect(events.at(-1)?.type).toBe('result');
  });

  it('names the missing provider key in the terminal error', async () => {
    const events = await runToEnd(w.url, runBody('hi', { model: 'openai:gpt-x' }));
    expect(events.map((e) => e.type)).toEqual(['session', 'error']);
    expect(events.at(-1)?.message).toContain('OPENAI_API_KEY is not set');
    const anthropic = await runToEnd(w.url, runBody('hi', { model: 'anthropic:claude-x' }));
    expect(anthropic.at(-1)?.message).toContain('ANTHROPIC_API_KEY is not set');
    const compat = await runToEnd(w.url, runBody('hi', { model: 'openai-compatible:llama' }));
    expect(compat.at(-1)?.message).toContain('OPENAI_COMPATIBLE_BASE_URL is not set');
  });

  it.each([
    ['a model without a provider', 'gpt-4o', /invalid model "gpt-4o"/],
    ['an unknown provider', 'acme:big-model', /unknown model provider "acme"/],
    ['no model at all', '', /profile\.model is required/],
  ])('ends a run with %s in one terminal error', async (_label, model, pattern) => {
    const body = runBody('hi');
    body.profile.model = model || undefined;
    const events = await runToEnd(w.url, body);
    expect(events.filter((e) => e.type === 'error' || e.type === 'result')).toHaveLength(1);
    expect(events.at(-1)?.message).toMatch(pattern);
  });

  it.each([
    ['an empty body', '', /body/],
    ['malformed JSON', '{"sessionId":', /malformed JSON/],
    ['a missing prompt', JSON.stringify({ ...runBody('x'), subtask: { title: 't' } }), /subtask\.prompt/],
    ['an unknown runtime', JSON.stringify({ ...runBody('x'), profile: { name: 'p', runtime: 'gpt' } }), /profile\.runtime/],
    ['a missing sessionMcpUrl', JSON.stringify({ ...runBody('x'), sessionMcpUrl: undefined }), /sessionMcpUrl/],
  ])('rejects %s with a 400 naming the field', async (_label, raw, pattern) => {
    const res = await fetch(`${w.url}/run`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: raw });
    expect(res.status).toBe(400);
    expect(res.headers.get('x-svc-worker-instance')).toMatch(/^wrk_/);
    expect((await res.json()).error).toMatch(pattern);
  });

  it('rejects a profile runtime this MODE does not serve', async () => {
    const res = await postRun(w.url, runBody('x', { profile: { runtime: 'runtime_a' } }));
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(/runtime_a is not served by this worker \(MODE=general\)/);
  });
});

describe('a worker in MODE=all', () => {
  let w: TestWorker;
  beforeAll(async () => {
    w = await startTestWorker({ mode: 'all' });
  });
  afterAll(async () => {
    await w.close();
  });

  it('dispatches general runs by profile.runtime', async () => {
    const events = await runToEnd(w.url, runBody('hi', { profile: { runtime: 'general' } }));
    expect(events.at(-1)).toMatchObject({ type: 'result', message: 'demo reply: hi' });
    expect((await (await fetch(`${w.url}/health`)).json()).runtime).toBe('all');
  });

  it.each([
    ['runtime_a', 'ANTHROPIC_API_KEY'],
    ['runtime_b', 'OPENAI_API_KEY'],
  ] as const)('answers %s without its provider key at once with one terminal error naming %s', async (runtime, key) => {
    const events = await runToEnd(w.url, runBody('hi', { profile: { runtime } }));
    expect(events).toEqual([expect.objectContaining({ type: 'error', message: `${key} is not set (needed by ${runtime})` })]);
  });
});
