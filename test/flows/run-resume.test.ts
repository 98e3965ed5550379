import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.ts';
import { freePort } from '../support/listen.ts';
import { createTestDatabase } from '../support/pg.ts';
import { startTestSvc, type TestSvc } from '../support/svc.ts';
import { followSse, isTerminalEvent, readSse } from '../support/sse.ts';

/**
 * Resuming a run stream with Last-Event-ID gives the events after that id, never the one at it: mid-run (replayed from
 * the memory of the conductor driving it) and after the end (from the log), and both agree with a full read.
 */
const KEY = 'ao_test_runresumerunresumerunres01';

let svc: TestSvc;
let fake: FakeProvider;
let dropDatabase: () => Promise<void>;

const api: TestSvc['api'] = (path, init) => svc.api(path, init);

beforeAll(async () => {
  fake = await startFakeProvider();
  const db = await createTestDatabase();
  dropDatabase = db.drop;
  const port = await freePort();
  svc = await startTestSvc({ DATABASE_URL: db.url, SVC_BOOTSTRAP_TOKEN: KEY, SVC_CONDUCTOR_URL: `http://127.0.0.1:${port}`, OPENAI_COMPATIBLE_BASE_URL: fake.url, OPENAI_COMPATIBLE_API_KEY: 'x' }, 'all', { port });
  expect((await api('/api/profiles', { method: 'POST', json: { name: 'plain', runtime: 'general', model: 'openai-compatible:fake-model' } })).status).toBe(201);
}, 60_000);
afterAll(async () => {
  await svc?.stop();
  await fake?.close();
  await dropDatabase?.();
});

describe('resuming a run stream with Last-Event-ID', () => {
  it('starts right after the given id, mid-run and after the end', async () => {
    const res = await api('/api/runs', { method: 'POST', json: { profile: 'plain', prompt: 'SLOW_DELTAS 40 20' } });
    expect(res.status).toBe(202);
    const { runId } = (await res.json()) as { runId: string };
    const path = `/api/runs/${runId}/stream`;
    const first = followSse((signal) => api(path, { signal }));
    await vi.waitFor(() => expect(first.frames.length).toBeGreaterThanOrEqual(6), { timeout: 20_000, interval: 20 });
    // Mid-run: the conductor driving the run replays from memory.
    const midRun = await readSse(await api(path, { headers: { 'Last-Event-ID': '4' } }));
    const full = await first.ended;
    expect(full.filter((f) => isTerminalEvent(f.event))).toHaveLength(1);
    expect(midRun).toEqual(full.filter((f) => f.id > 4));
    // After the end: from the log.
    const after = await readSse(await api(path, { headers: { 'Last-Event-ID': '4' } }));
    expect(after).toEqual(full.filter((f) => f.id > 4));
    expect(await readSse(await api(path))).toEqual(full);
  });
});
