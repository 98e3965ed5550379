import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RunEvent } from '../../src/contracts/run-event.ts';
import { configureLogging } from '../../src/shared/log.ts';
import { startFakeProvider, modelRequests, type FakeProvider } from '../support/fake-provider.ts';
import { collect, runnerHarness, terminals, TENANT } from '../support/runner.ts';

configureLogging({ level: 'warn' });

/**
 * Runs through the runner over real HTTP: conductor-side runner client → runner on a port → agent-worker on a port →
 * fake model provider. Every stream ends with exactly one terminal event, whatever the worker or the caller does.
 */
let fake: FakeProvider;
const { startWorker, startRunner, stopAll } = runnerHarness(() => fake);

beforeAll(async () => {
  fake = await startFakeProvider();
});
afterEach(() => stopAll());
afterAll(() => fake.close());

describe('runs through runner and worker over HTTP', () => {
  it('runs a text prompt, renames the session event and records the run on the session', async () => {
    const w = await startWorker();
    const { client } = await startRunner({ workerUrl: w.url });
    const sessionId = await client.createSession(TENANT, 'helper');

    const events = await collect(await client.run(TENANT, { profile: 'helper', sessionId, title: 't', prompt: 'hello runner' }));

    expect(events[0]).toMatchObject({ type: 'session_init', runtimeSessionId: expect.any(String) });
    expect(events.some((e) => e.type === 'session')).toBe(false);
    expect(terminals(events)).toEqual([expect.objectContaining({ type: 'result', message: 'FAKE-REPLY: hello runner' })]);
    expect(events.at(-1)?.type).toBe('result');
    const session = await client.getSession(TENANT, sessionId);
    expect(session).toMatchObject({ status: 'idle', runCount: 1, lastRunStatus: 'ok', lastPrompt: 'hello runner', runtimeSessionId: events[0].runtimeSessionId });
    // the session is free the moment the result arrives: a follow-up run is not refused as busy
    const next = await collect(await client.run(TENANT, { profile: 'helper', sessionId, prompt: 'and again' }));
    expect(next.at(-1)).toMatchObject({ type: 'result', message: 'FAKE-REPLY: and again' });
    expect(modelRequests(fake).at(-1)?.body.messages[0]).toMatchObject({ role: 'system' });
  });

  it('moves a conversation to a second runner and worker through state export and hydrate', async () => {
    const wA = await startWorker();
    const a = await startRunner({ workerUrl: wA.url });
    const sessionId = await a.client.createSession(TENANT, 'helper');
    await collect(await a.client.run(TENANT, { profile: 'helper', sessionId, prompt: 'remember the word kumquat' }));

    const bundle = await a.client.exportState(TENANT, sessionId);
    expect(bundle).toBeDefined();
    expect(bundle!.contentType).toMatch(/^application\/json/);
    expect(bundle!.runtimeSessionId).toBe((await a.client.getSession(TENANT, sessionId)).runtimeSessionId);

    const wB = await startWorker();
    const b = await startRunner({ workerUrl: wB.url });
    await b.client.hydrate(TENANT, sessionId, {
      profileName: 'helper',
      runtimeSessionId: bundle!.runtimeSessionId,
      stateContentType: bundle!.contentType,
      stateB64: Buffer.from(bundle!.bytes).toString('base64'),
    });
    const events = await collect(await b.client.run(TENANT, { profile: 'helper', sessionId, prompt: 'which word?' }));
    expect(events.at(-1)).toMatchObject({ type: 'result', message: 'FAKE-REPLY: which word?' });

    const history = JSON.stringify(modelRequests(fake).at(-1)?.body.messages);
    expect(history).toContain('remember the word kumquat');
    expect(history).toContain('FAKE-REPLY: remember the word kumquat');
    expect(await b.client.getSession(TENANT, sessionId)).toMatchObject({ runCount: 1, status: 'idle' });
  });

  it('answers state export with 404 before the first run and 500 when the bundle is over the cap', async () => {
    const w = await startWorker();
    const { client } = await startRunner({ workerUrl: w.url, stateCapBytes: 16 });
    const sessionId = await client.createSession(TENANT, 'helper');
    expect(await client.exportState(TENANT, sessionId)).toBeUndefined();
    await collect(await client.run(TENANT, { profile: 'helper', sessionId, prompt: 'a prompt long enough to pass sixteen bytes' }));
    const err = await client.exportState(TENANT, sessionId).catch((e) => e);
    expect(err).toMatchObject({ status: 500, message: expect.stringContaining('over the size cap') });
  });

  it('refuses with 400 a bundle the worker cannot import, and creates no session', async () => {
    const w = await startWorker();
    const { client } = await startRunner({ workerUrl: w.url });
    const err = await client
      .hydrate(TENANT, 'sess-broken', { profileName: 'helper', runtimeSessionId: 'x', stateContentType: 'application/json', stateB64: Buffer.from('not json at all').toString('base64') })
      .catch((e) => e);
    expect(err).toMatchObject({ status: 400, message: expect.stringContaining('state import rejected') });
    await expect(client.getSession(TENANT, 'sess-broken')).rejects.toMatchObject({ status: 404 });
  });

  it('ends a run with one terminal error when the worker dies mid-stream', async () => {
    const w = await startWorker();
    const { client } = await startRunner({ workerUrl: w.url });
    const sessionId = await client.createSession(TENANT, 'helper');
    const events: RunEvent[] = [];
    for await (const e of await client.run(TENANT, { profile: 'helper', sessionId, prompt: 'SLOW_DELTAS 50 100' })) {
      events.push(e);
      if (e.type === 'assistant' && e.delta && events.filter((x) => x.delta).length === 1) await w.kill();
    }
    expect(terminals(events)).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ type: 'error', message: expect.stringMatching(/^worker stream broke: /) });
    expect(await client.getSession(TENANT, sessionId)).toMatchObject({ status: 'errored', lastRunStatus: 'error' });
    const general = (await client.topology()).sidecars.find((s) => s.runtime === 'general')!;
    expect(['degraded', 'unreachable']).toContain(general.state);
  });

  it('cancels the model call when the caller aborts the run mid-stream', async () => {
    const w = await startWorker();
    const { client } = await startRunner({ workerUrl: w.url });
    const sessionId = await client.createSession(TENANT, 'helper');
    const ac = new AbortController();
    const before = modelRequests(fake).length;
    const events: RunEvent[] = [];
    for await (const e of await client.run(TENANT, { profile: 'helper', sessionId, prompt: 'HANG_AFTER_FIRST please' }, ac.signal)) {
      events.push(e);
      if (e.type === 'assistant') ac.abort();
    }
    // the caller's own stream still ends with exactly one terminal (the client's synthetic error)
    expect(terminals(events)).toEqual([expect.objectContaining({ type: 'error', message: 'run cancelled by the caller' })]);

    const call = await fake.when(() => modelRequests(fake).slice(before).find((r) => r.clientClosedEarly));
    expect(call.clientClosedEarly).toBe(true);
    await vi.waitFor(async () => expect(await client.getSession(TENANT, sessionId)).toMatchObject({ status: 'idle', lastRunStatus: 'cancelled' }));
  });

  it('refuses a second run on a session that is still running with 409 session busy', async () => {
    const w = await startWorker();
    const { client } = await startRunner({ workerUrl: w.url });
    const sessionId = await client.createSession(TENANT, 'helper');
    const ac = new AbortController();
    const first = (await client.run(TENANT, { profile: 'helper', sessionId, prompt: 'HANG_AFTER_FIRST' }, ac.signal))[Symbol.asyncIterator]();
    expect((await first.next()).value).toMatchObject({ type: 'session_init' });

    await expect(client.run(TENANT, { profile: 'helper', sessionId, prompt: 'again' })).rejects.toMatchObject({ status: 409, message: expect.stringContaining('session busy') });
    ac.abort();
    await first.return?.();
  });
});
