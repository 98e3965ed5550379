import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configureLogging } from '../../shared/log.ts';
import { readNdjson } from '../../shared/ndjson.ts';
import type { RunEvent } from '../../contracts/run-event.ts';
import { startFakeProvider, modelRequests, lastUserPrompt, type FakeProvider } from '../../../test/support/fake-provider.ts';
import { startTestWorker, runBody, postRun, type TestWorker } from '../../../test/support/worker.ts';

configureLogging({ level: 'warn' });

/** Reads a run until its first assistant delta, then hands back the rest of the stream. */
async function untilFirstDelta(res: Response) {
  const events = readNdjson<RunEvent>(res.body!)[Symbol.asyncIterator]();
  for (;;) {
    const next = await events.next();
    if (next.done || (next.value.type === 'assistant' && next.value.delta)) return events;
  }
}

async function rest(events: AsyncIterator<RunEvent>): Promise<RunEvent[]> {
  const out: RunEvent[] = [];
  for (let next = await events.next(); !next.done; next = await events.next()) out.push(next.value);
  return out;
}

describe('worker lifecycle', () => {
  let fake: FakeProvider;
  beforeAll(async () => {
    fake = await startFakeProvider();
  });
  afterAll(async () => {
    await fake.close();
  });
  const start = () => startTestWorker({ providerEnv: { OPENAI_COMPATIBLE_BASE_URL: fake.url } });
  const hanging = (sessionId: string) => runBody(`HANG_AFTER_FIRST ${sessionId}`, { model: 'openai-compatible:fake-model', sessionId });

  it('counts concurrent runs in flight, in health and in the run response header', async () => {
    const w = await start();
    try {
      const a = await postRun(w.url, hanging('sess-a'));
      const b = await postRun(w.url, hanging('sess-b'));
      expect(a.headers.get('x-svc-worker-inflight')).toBe('1');
      expect(b.headers.get('x-svc-worker-inflight')).toBe('2');
      const streams = [await untilFirstDelta(a), await untilFirstDelta(b)];
      expect((await (await fetch(`${w.url}/health`)).json()).inflight).toBe(2);
      await Promise.all(streams.map((s) => s.return?.(undefined)));
    } finally {
      await w.close();
    }
  });

  it('ends live runs with one terminal error when the worker closes, and stops the model calls', async () => {
    const w = await start();
    const res = await postRun(w.url, hanging('sess-close'));
    const events = await untilFirstDelta(res);
    await w.worker.close();
    const after = await rest(events);
    expect(after).toEqual([expect.objectContaining({ type: 'error', message: 'run cancelled' })]);
    await fake.when(() => modelRequests(fake).find((r) => r.clientClosedEarly && lastUserPrompt(r) === 'HANG_AFTER_FIRST sess-close'));
    await w.close();
  });

  it('keeps the instance header on errors and unknown routes', async () => {
    const w = await start();
    try {
      const health = await fetch(`${w.url}/health`);
      const missing = await fetch(`${w.url}/nope`);
      expect(missing.status).toBe(404);
      expect(missing.headers.get('x-svc-worker-instance')).toBe(health.headers.get('x-svc-worker-instance'));
    } finally {
      await w.close();
    }
  });
});
