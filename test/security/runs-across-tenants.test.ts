import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventSourceParserStream } from 'eventsource-parser/stream';
import { backends, startOn } from '../support/backends.ts';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.ts';
import type { TestSvc } from '../support/svc.ts';
import { keyOf, startOperatorSvc } from '../support/tenants.ts';

/**
 * Issue 12, items 6 and 7: a run of tenant A is invisible to tenant B through the run routes. B cannot terminate it
 * or learn its session id (terminate answers exactly as for an unknown run), and a run id B supplies never reveals
 * that A already uses it (B's run is created like any fresh id; both runs live side by side).
 */
const UNKNOWN = { cancelled: false, sessionReleased: false, claimStolen: false, statusWritten: false, sessionId: '', warnings: ['run_not_found'] };

async function streamEvents(res: Response): Promise<Array<{ type: string; message?: string }>> {
  expect(res.status).toBe(200);
  const out: Array<{ type: string; message?: string }> = [];
  for await (const e of res.body!.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream())) out.push(JSON.parse(e.data));
  return out;
}

describe.each(backends)('runs across tenants on $name', (backend) => {
  let svc: TestSvc;
  let fake: FakeProvider;
  let keyB: string;

  beforeAll(async () => {
    fake = await startFakeProvider();
    svc = await startOn(backend, (url) => startOperatorSvc({ DATABASE_URL: url, OPENAI_COMPATIBLE_BASE_URL: fake.url, OPENAI_COMPATIBLE_API_KEY: 'x' }));
    keyB = await keyOf(svc, 'tenant-b');
    for (const key of [svc.key, keyB]) {
      for (const [name, model] of [['demo', 'demo:echo'], ['fake', 'openai-compatible:fake-model']]) {
        expect((await svc.api('/api/profiles', { method: 'POST', key, json: { name, runtime: 'general', model } })).status).toBe(201);
      }
    }
  });
  afterAll(async () => {
    await svc?.stop();
    await fake?.close();
  });

  it("answers another tenant's terminate of a running run exactly like an unknown run, and the run keeps running", async () => {
    const started = await svc.api('/api/runs', { method: 'POST', json: { profile: 'fake', prompt: `HANG_AFTER_FIRST ${backend.name} terminate` } });
    expect(started.status).toBe(202);
    const { runId, sessionId } = await started.json();
    const modelCall = await fake.when(() => fake.requests.find((r) => JSON.stringify(r.body).includes(`HANG_AFTER_FIRST ${backend.name} terminate`)));

    const byB = await svc.api(`/api/runs/${runId}/terminate`, { method: 'POST', key: keyB });
    expect(byB.status).toBe(200);
    const answer = await byB.json();
    expect(answer).toEqual({ runId, ...UNKNOWN });
    expect(JSON.stringify(answer)).not.toContain(sessionId);
    const unknown = await svc.api('/api/runs/run_never_was/terminate', { method: 'POST', key: keyB });
    expect(await unknown.json()).toEqual({ runId: 'run_never_was', ...UNKNOWN });

    // A's run was not touched: still running, its model call still open
    expect((await (await svc.api(`/api/runs/${runId}`)).json()).status).toBe('running');
    expect(modelCall.clientClosedEarly).toBe(false);
    const own = await svc.api(`/api/runs/${runId}/terminate`, { method: 'POST' });
    expect(await own.json()).toMatchObject({ runId, cancelled: true, sessionId, statusWritten: true });
    expect((await (await svc.api(`/api/runs/${runId}`)).json()).status).toBe('cancelled');
  });

  it("gives a run id another tenant already uses the same answer as a fresh id, and keeps both runs apart", async () => {
    const id = `shared-${backend.name}-run-1`;
    const a = await svc.api('/api/runs', { method: 'POST', json: { id, profile: 'demo', prompt: 'from tenant a' } });
    expect(a.status).toBe(202);
    expect((await streamEvents(await svc.api(`/api/runs/${id}/stream`))).at(-1)).toMatchObject({ type: 'result', message: 'demo reply: from tenant a' });

    const fresh = await svc.api('/api/runs', { method: 'POST', key: keyB, json: { id: `fresh-${backend.name}-run-1`, profile: 'demo', prompt: 'fresh' } });
    const taken = await svc.api('/api/runs', { method: 'POST', key: keyB, json: { id, profile: 'demo', prompt: 'from tenant b' } });
    expect([fresh.status, taken.status]).toEqual([202, 202]);
    expect((await taken.json()).runId).toBe(id);
    expect(Object.keys(await fresh.json()).sort()).toEqual(['runId', 'sessionId']);

    // each tenant sees only its own run under that id, with its own events
    expect((await streamEvents(await svc.api(`/api/runs/${id}/stream`, { key: keyB }))).at(-1)).toMatchObject({ type: 'result', message: 'demo reply: from tenant b' });
    const seenByA = await (await svc.api(`/api/runs/${id}`)).json();
    const seenByB = await (await svc.api(`/api/runs/${id}`, { key: keyB })).json();
    expect(seenByA).toMatchObject({ id, status: 'ok', subTask: { prompt: 'from tenant a' } });
    expect(seenByB).toMatchObject({ id, status: 'ok', subTask: { prompt: 'from tenant b' } });
    expect(JSON.stringify(seenByA.events)).not.toContain('from tenant b');
    expect((await (await svc.api('/api/runs', { key: keyB })).json()).filter((r: { id: string }) => r.id === id)).toHaveLength(1);

    // a tenant's own id is still refused a second time
    const again = await svc.api('/api/runs', { method: 'POST', key: keyB, json: { id, profile: 'demo' } });
    expect(again.status).toBe(409);
    expect(await again.json()).toEqual({ error: `run ${id} already exists` });
  });
});
