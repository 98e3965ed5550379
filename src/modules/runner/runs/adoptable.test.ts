import { getEventListeners } from 'node:events';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { RUN_ADOPTABLE_HEADER } from '../../../contracts/runner.ts';
import type { RunEvent } from '../../../contracts/run-event.ts';
import { createLogger } from '../../../shared/log.ts';
import { startFakeProvider, type FakeProvider } from '../../../../test/support/fake-provider.ts';
import { startTestWorker, type TestWorker } from '../../../../test/support/worker.ts';
import { call, makeRunner, ndjsonLines, putProfile } from '../runner.fixture.ts';
import type { Runner } from '../runner.ts';
import { createTaps } from './taps.ts';
import type { StartedRun } from './runs.service.ts';

/**
 * Adoptable runs on a real worker and the fake provider: a conductor that hangs up does not stop the run; another
 * re-attaches after the last event it holds and gets exactly the rest; nobody re-attaching cancels the run after the
 * grace; an explicit cancel stops it.
 */
let fake: FakeProvider;
let worker: TestWorker;
let runner: Runner;

beforeAll(async () => {
  fake = await startFakeProvider();
  worker = await startTestWorker({ providerEnv: { OPENAI_COMPATIBLE_BASE_URL: fake.url, OPENAI_COMPATIBLE_API_KEY: 'fake' } });
});
afterEach(async () => {
  await runner?.close();
});
afterAll(async () => {
  await worker?.close();
  await fake?.close();
});

const start = async (graceMs = 60_000) => {
  runner = makeRunner({ config: { workerUrl: worker.url, adoptGraceMs: graceMs } });
  await putProfile(runner, { name: 'p', model: 'openai-compatible:fake-model' });
};
const adoptable = (id: string, prompt: string) => call(runner, 'POST', '/runner/run', { body: { subTask: { id, profile: 'p', prompt } }, headers: { [RUN_ADOPTABLE_HEADER]: '1' } });
const attach = (id: string, after: number | string) => call(runner, 'GET', `/runner/runs/${id}/events?after=${after}`);
/** Reads the stream's first event, then hangs up (cancels the body, as a dying conductor's socket does). */
async function firstThenHangUp(res: Response): Promise<RunEvent> {
  const reader = res.body!.getReader();
  let text = '';
  while (!text.includes('\n')) text += new TextDecoder().decode((await reader.read()).value);
  await reader.cancel();
  return JSON.parse(text.slice(0, text.indexOf('\n'))) as RunEvent;
}

describe('an adoptable run', () => {
  it('goes on when its conductor hangs up, and a re-attached reader gets exactly the events after the ones it holds', async () => {
    await start();
    const res = await adoptable('run-a', 'HOLD adoptA');
    expect(res.status).toBe(200);
    const first = await firstThenHangUp(res); // the conductor dies holding one event
    expect(first.type).toBe('session_init');
    fake.release('adoptA');

    const rest = await ndjsonLines<RunEvent>(await attach('run-a', 1));
    expect(rest.at(-1)).toMatchObject({ type: 'result' });
    expect(rest.filter((e) => e.type === 'result' || e.type === 'error')).toHaveLength(1);
    expect(rest.map((e) => e.type)).not.toContain('session_init');
    expect(rest.find((e) => e.type === 'result')?.message ?? '').toContain('FAKE-REPLY: HOLD adoptA');
    // a reader holding everything but the terminal gets just the terminal; one from the start gets the whole run
    const all = await ndjsonLines<RunEvent>(await attach('run-a', 0));
    expect(all).toEqual([first, ...rest]);
    expect(await ndjsonLines<RunEvent>(await attach('run-a', all.length - 1))).toEqual([all.at(-1)]);
  });

  it('is cancelled when nobody re-attaches within the grace', async () => {
    await start(200);
    const res = await adoptable('run-b', 'HOLD adoptB');
    await fake.when(() => fake.requests.find((r) => JSON.stringify(r.body ?? '').includes('HOLD adoptB')));
    await firstThenHangUp(res);
    await fake.when(() => fake.requests.find((r) => JSON.stringify(r.body ?? '').includes('HOLD adoptB') && r.clientClosedEarly));
    const events = await ndjsonLines<RunEvent>(await attach('run-b', 0));
    expect(events.at(-1)).toMatchObject({ type: 'error', message: expect.stringContaining('none re-attached within 200 ms') });
    const sessions = (await (await call(runner, 'GET', '/runner/sessions')).json()).sessions;
    expect(sessions).toEqual([expect.objectContaining({ lastRunStatus: 'cancelled' })]);
    fake.release('adoptB');
  });

  it('stops on an explicit cancel, and answers 404 for a run it does not have and 400 for a bad position', async () => {
    await start();
    const res = await adoptable('run-c', 'HOLD adoptC');
    const events = ndjsonLines<RunEvent>(res);
    await fake.when(() => fake.requests.find((r) => JSON.stringify(r.body ?? '').includes('HOLD adoptC')));
    expect((await call(runner, 'POST', '/runner/runs/run-c/cancel')).status).toBe(204);
    expect((await events).at(-1)).toMatchObject({ type: 'error', message: expect.stringContaining('cancelled by its conductor') });
    fake.release('adoptC');

    const unknown = await attach('run-nope', 0);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: 'unknown run: run-nope' });
    expect((await call(runner, 'POST', '/runner/runs/run-nope/cancel')).status).toBe(404);
    const bad = await attach('run-c', '-1');
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toMatch(/^after: /);
    // another tenant's run of the same id is not found
    expect((await call(runner, 'GET', '/runner/runs/run-c/events?after=0', { tenant: 'other' })).status).toBe(404);
  });

  it('refuses an adoptable run without an id', async () => {
    await start();
    const res = await call(runner, 'POST', '/runner/run', { body: { subTask: { profile: 'p', prompt: 'x' } }, headers: { [RUN_ADOPTABLE_HEADER]: '1' } });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(/^subTask\.id: /);
  });
});

describe('the events kept for re-attaching', () => {
  it('are bounded: a reader asking for evicted events gets 410, one within the window the rest', async () => {
    const taps = createTaps({ graceMs: 60_000, maxEvents: 2, log: createLogger('test') });
    const events: RunEvent[] = [
      { type: 'assistant', message: 'a', ts: '1' },
      { type: 'assistant', message: 'b', ts: '2' },
      { type: 'assistant', message: 'c', ts: '3' },
      { type: 'result', message: 'done', ts: '4' },
    ];
    const run = { session: {}, events: (async function* () { yield* events; })(), cancel: () => {} } as unknown as StartedRun;
    taps.open('t', 'r', run);
    // the runner reads the run on its own; once it has, the first two events are gone
    await vi.waitFor(() => expect(() => taps.read('t', 'r', 2, new AbortController().signal)).not.toThrow());
    const rest: RunEvent[] = [];
    for await (const e of taps.read('t', 'r', 2, new AbortController().signal)) rest.push(e);
    expect(rest).toEqual(events.slice(2));
    expect(() => taps.read('t', 'r', 1, new AbortController().signal)).toThrow(expect.objectContaining({ status: 410 }));
  });

  it('keeps one abort listener on a reader that waits through a long run, not one per event', async () => {
    const taps = createTaps({ graceMs: 60_000, maxEvents: 5_000, log: createLogger('test') });
    let push!: (e: RunEvent) => void;
    const source = new ReadableStream<RunEvent>({ start: (c) => void (push = (e) => (e.type === 'result' ? (c.enqueue(e), c.close()) : c.enqueue(e))) });
    taps.open('t', 'long', { session: {}, events: source, cancel: () => {} } as unknown as StartedRun);
    const detach = new AbortController();
    const reader = taps.read('t', 'long', 0, detach.signal)[Symbol.asyncIterator]();
    for (let i = 0; i < 1_000; i++) {
      // the reader waits for each event: it is delivered after the reader asked for it
      const next = reader.next();
      push({ type: 'assistant', message: String(i), delta: true, ts: String(i) });
      expect((await next).value).toMatchObject({ message: String(i) });
    }
    expect(getEventListeners(detach.signal, 'abort')).toHaveLength(1);
    push({ type: 'result', message: 'done', ts: 'end' });
    expect((await reader.next()).value).toMatchObject({ type: 'result' });
    expect((await reader.next()).done).toBe(true);
    expect(getEventListeners(detach.signal, 'abort')).toHaveLength(0);
  });
});

describe('an ended adoptable run', () => {
  it('lets go of its run (worker stream, buffers) and keeps only its events, which a late reader still replays', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const taps = createTaps({ graceMs: 60_000, maxEvents: 100, log: createLogger('test') });
    const events: RunEvent[] = [
      { type: 'assistant', message: 'a', ts: '1' },
      { type: 'result', message: 'done', ts: '2' },
    ];
    let reclaimed: (what: string) => void = () => {};
    const released = new Promise<string>((resolve) => (reclaimed = resolve));
    const registry = new FinalizationRegistry(reclaimed);
    registry.register(openRun(), 'the run');
    /** Opens the run in a frame of its own, so nothing in this test holds it once it is handed over. */
    function openRun() {
      // what a run holds until its end: here 8 MiB standing for the worker's stream and its buffers
      const held = new Uint8Array(8 * 2 ** 20);
      const run = { session: {}, events: (async function* () { yield* events; })(), cancel: () => held.fill(0) } as unknown as StartedRun;
      taps.open('t', 'r', run);
      return run;
    }
    const read = async () => {
      const got: RunEvent[] = [];
      for await (const e of taps.read('t', 'r', 0, new AbortController().signal)) got.push(e);
      return got;
    };
    expect(await read()).toEqual(events);
    // the tap is kept for a late reader, but not the run: a full collection reclaims it
    await vi.waitFor(async () => {
      gc();
      expect(await Promise.race([released, new Promise((r) => setImmediate(r, 'held'))])).toBe('the run');
    });
    expect(taps.size()).toBe(1);
    expect(await read()).toEqual(events);
    expect(taps.cancel('t', 'r', 'late')).toBe(true); // cancelling an ended run changes nothing
    expect(await read()).toEqual(events);
  });
});
