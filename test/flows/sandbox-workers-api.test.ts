import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { server } from '../support/backends.ts';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.ts';
import { readSse } from '../support/sse.ts';
import { startTestSvc, type TestSvc } from '../support/svc.ts';

/**
 * Sandbox workers through the conductor API of one `all` instance: a sandbox profile's run goes to a worker process
 * of its own, and `/api/worker/leases` and `/api/sessions/{id}/worker` read its lease from the runner.
 */
let svc: TestSvc;
let fake: FakeProvider;
let cleanup: () => Promise<void>;
const dataDir = mkdtempSync(join(tmpdir(), 'svc-sandbox-api-'));

beforeAll(async () => {
  fake = await startFakeProvider();
  const db = await server.setup();
  cleanup = db.cleanup;
  svc = await startTestSvc({ DATABASE_URL: db.url, SVC_DATA_DIR: dataDir, OPENAI_COMPATIBLE_BASE_URL: fake.url, OPENAI_COMPATIBLE_API_KEY: 'x' }, 'all');
  for (const profile of [
    { name: 'boxed', runtime: 'general', model: 'openai-compatible:fake-model', workerMode: 'sandbox' },
    { name: 'elsewhere', runtime: 'general', model: 'openai-compatible:fake-model', workerMode: 'sandbox', workerSubstrate: 'container' },
    { name: 'plain', runtime: 'general', model: 'openai-compatible:fake-model' },
  ]) {
    const res = await svc.api('/api/profiles', { method: 'POST', json: profile });
    expect(res.status, await res.clone().text()).toBe(201);
  }
});
afterAll(async () => {
  await svc?.stop();
  await fake?.close();
  await cleanup?.();
  rmSync(dataDir, { recursive: true, force: true });
});

async function run(profile: string, prompt: string) {
  const res = await svc.api('/api/runs', { method: 'POST', json: { profile, prompt } });
  expect(res.status).toBe(202);
  const { runId, sessionId } = (await res.json()) as { runId: string; sessionId: string };
  const frames = await readSse(await svc.api(`/api/runs/${runId}/stream`));
  return { runId, sessionId, events: frames.map((f) => f.event) };
}

describe('sandbox workers through the conductor', () => {
  it('places a sandbox profile on the runner default substrate, and says when no runner offers the one it names', async () => {
    const boxed = await (await svc.api('/api/profiles/boxed')).json();
    expect(boxed.workerPlacement).toEqual({ substrate: 'process', source: 'runner-default', servable: true });
    const elsewhere = await (await svc.api('/api/profiles/elsewhere')).json();
    expect(elsewhere.workerPlacement).toMatchObject({ substrate: 'container', source: 'profile', servable: false, detail: 'no live runner offers substrate container' });
  });

  it('runs a sandbox profile on a worker of its own and serves its lease', async () => {
    const { sessionId, events } = await run('boxed', 'hello from the conductor');
    expect(events.at(-1)).toMatchObject({ type: 'result', message: 'FAKE-REPLY: hello from the conductor' });
    const lease = await (await svc.api(`/api/sessions/${sessionId}/worker`)).json();
    expect(lease).toMatchObject({ sessionId, substrate: 'process', runtime: 'general', state: 'running', workerId: expect.stringMatching(/^process-/) });
    const list = await svc.api('/api/worker/leases?limit=10');
    expect(list.headers.get('x-total-count')).toBe('1');
    expect(await list.json()).toEqual([lease]);
  }, 60_000);

  it('answers 404 no sandbox worker for a static session and an unknown one, and fails a run on a substrate not offered', async () => {
    const plain = await run('plain', 'hi');
    const res = await svc.api(`/api/sessions/${plain.sessionId}/worker`);
    expect(res.status).toBe(404);
    expect((await res.json()).error).toBe('no sandbox worker');
    const unknown = await svc.api('/api/sessions/sess-nope/worker');
    expect(unknown.status).toBe(404);
    const refused = await run('elsewhere', 'hi');
    expect(refused.events.at(-1)).toMatchObject({ type: 'error', message: expect.stringContaining('substrate container is not offered by this runner') });
  }, 60_000);
});
