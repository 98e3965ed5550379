import { afterEach, describe, expect, it } from 'vitest';
import { createWorker, type Worker } from '../modules/worker/index.ts';
import { configureLogging } from '../shared/log.ts';
import { runBody, workerConfig } from '../../test/support/worker.ts';
import type { RunEvent } from './run-event.ts';
import { createWorkerClient, type WorkerClient } from './worker.client.ts';

configureLogging({ level: 'warn' });

let worker: Worker;
afterEach(() => worker?.close());

const BASE = 'http://worker.test';
/** The contract's two transports: HTTP (the worker's routes) and direct (the worker module called in-process). */
const transports = [
  ['http', (w: Worker): WorkerClient => createWorkerClient({ baseUrl: BASE, fetch: (req) => w.app.fetch(req) })],
  ['direct', (w: Worker): WorkerClient => w.direct(BASE)],
] as const;

const read = async (events: AsyncIterable<RunEvent>) => {
  const out: RunEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
};

describe.each(transports)('worker client over %s', (_transport, clientFor) => {
  it('reports health and the instance that takes a run, and streams the run to one terminal result', async () => {
    worker = createWorker({ config: workerConfig() });
    const client = clientFor(worker);
    const health = await client.health();
    expect(health).toMatchObject({ ok: true, runtime: 'general', inflight: 0 });
    const run = await client.run(runBody('hello', { sessionId: 'sess-a' }), new AbortController().signal);
    expect(run.instanceId).toBe(health.instanceId);
    expect(run.inflight).toBe(1);
    const events = await read(run.events);
    expect(events.filter((e) => e.type === 'result' || e.type === 'error')).toEqual([expect.objectContaining({ type: 'result' })]);
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(['session', 'assistant']));
    expect((await client.health()).inflight).toBe(0);
  });

  it('refuses a runtime the worker does not serve with a 400 CallError', async () => {
    worker = createWorker({ config: workerConfig() });
    const err = await clientFor(worker)
      .run(runBody('hi', { profile: { runtime: 'runtime_a' } }), new AbortController().signal)
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'CallError', status: 400, message: 'worker run: profile.runtime: runtime runtime_a is not served by this worker (MODE=general)' });
  });

  it('moves a session state bundle out and in, and says when there is none or it is over the cap', async () => {
    worker = createWorker({ config: workerConfig() });
    const client = clientFor(worker);
    expect(await client.exportState('sess-none', 'general')).toBeUndefined();
    await read((await client.run(runBody('keep me', { sessionId: 'sess-b' }), new AbortController().signal)).events);
    const bundle = await client.exportState('sess-b', 'general');
    expect(bundle).toMatchObject({ contentType: expect.stringContaining('application/json'), runtimeSessionId: 'sess-b' });
    expect(JSON.parse(new TextDecoder().decode(bundle!.bytes))).toEqual([
      { role: 'user', content: 'keep me' },
      { role: 'assistant', content: [{ type: 'text', text: 'demo reply: keep me' }] },
    ]);
    await expect(client.exportState('sess-b', 'general', { maxBytes: 8 })).rejects.toMatchObject({ name: 'CallError', status: 413 });
    await client.importState('sess-c', 'general', bundle!.bytes, bundle!.contentType, 'sess-c');
    expect((await client.exportState('sess-c', 'general'))?.bytes).toEqual(bundle!.bytes);
    await expect(client.importState('sess-d', 'general', new TextEncoder().encode('[{"role":'), 'application/json', '')).rejects.toMatchObject({ status: 400 });
  });

  it('ends a run its caller aborts and releases it', async () => {
    worker = createWorker({ config: workerConfig() });
    const client = clientFor(worker);
    const ac = new AbortController();
    const run = await client.run(runBody('hello', { sessionId: 'sess-e' }), ac.signal);
    ac.abort();
    const events = await read(run.events);
    expect(events.filter((e) => e.type === 'result')).toEqual([]);
    expect((await client.health()).inflight).toBe(0);
  });
});
