import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventSourceParserStream } from 'eventsource-parser/stream';
import { backends } from '../support/backends.ts';
import { startTestSvc, type TestSvc } from '../support/svc.ts';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.ts';

interface Frame {
  id?: string;
  data: string;
}

/** Reads an SSE response to its end (the server closes it after the terminal event). */
async function readFrames(res: Response): Promise<Frame[]> {
  const frames: Frame[] = [];
  const stream = res.body!.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
  for await (const e of stream) frames.push({ id: e.id, data: e.data });
  return frames;
}

const events = (frames: Frame[]) => frames.map((f) => JSON.parse(f.data) as { type: string; message?: string });

describe.each(backends)('conductor on $name', (backend) => {
  let svc: TestSvc;
  let fake: FakeProvider;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    fake = await startFakeProvider();
    const db = await backend.setup();
    cleanup = db.cleanup;
    svc = await startTestSvc({ DATABASE_URL: db.url, OPENAI_COMPATIBLE_BASE_URL: fake.url, OPENAI_COMPATIBLE_API_KEY: 'x' }, 'all');
    for (const [name, model] of [['demo', 'demo:echo'], ['fake', 'openai-compatible:fake-model']]) {
      expect((await svc.api('/api/profiles', { method: 'POST', json: { name, runtime: 'general', model } })).status).toBe(201);
    }
  });
  afterAll(async () => {
    await svc?.stop();
    await fake?.close();
    await cleanup?.();
  });

  const startRun = async (body: Record<string, unknown>) => {
    const res = await svc.api('/api/runs', { method: 'POST', json: body });
    expect(res.status).toBe(202);
    return (await res.json()) as { runId: string; sessionId: string };
  };
  const stream = async (runId: string, lastEventId?: string) =>
    readFrames(await svc.api(`/api/runs/${runId}/stream`, { headers: lastEventId ? { 'Last-Event-ID': lastEventId } : {} }));

  it('runs a profile on the demo model out of the box and streams it to the end', async () => {
    const { runId, sessionId } = await startRun({ profile: 'demo', prompt: 'hello there' });
    expect(sessionId).toMatch(/^sess-[0-9a-f]{8}-/);
    const frames = await stream(runId);
    const evs = events(frames);
    expect(evs.filter((e) => e.type === 'result' || e.type === 'error')).toEqual([{ type: 'result', message: 'demo reply: hello there', ts: expect.any(String) }]);
    expect(evs.at(-1)!.type).toBe('result');
    expect(frames.map((f) => Number(f.id))).toEqual(frames.map((_, i) => i + 1));
    const run = await (await svc.api(`/api/runs/${runId}`)).json();
    expect(run).toMatchObject({ id: runId, status: 'ok', subTask: { profile: 'demo', prompt: 'hello there', sessionId } });
    expect(run.events.length).toBe(frames.length);
  });

  it('replays only the events after Last-Event-ID', async () => {
    const { runId } = await startRun({ profile: 'demo', prompt: 'resume me' });
    const all = await stream(runId);
    const rest = await stream(runId, all[2].id);
    expect(rest.map((f) => f.id)).toEqual(all.slice(3).map((f) => f.id));
  });

  it('continues the conversation on a reused session', async () => {
    const first = await startRun({ profile: 'fake', prompt: 'remember the word kumquat' });
    await stream(first.runId);
    const second = await startRun({ profile: 'fake', prompt: 'what was the word?', sessionId: first.sessionId });
    expect(second.sessionId).toBe(first.sessionId);
    await stream(second.runId);
    const body = JSON.stringify(fake.requests.at(-1)!.body);
    expect(body).toContain('remember the word kumquat');
    const session = await (await svc.api(`/api/sessions/${first.sessionId}`)).json();
    expect(session).toMatchObject({ id: first.sessionId, profile: 'fake', status: 'idle', runCount: 2, lastRunStatus: 'ok', lastPrompt: 'what was the word?' });
    const runs = await (await svc.api(`/api/sessions/${first.sessionId}/runs`)).json();
    expect(runs.map((r: { id: string }) => r.id)).toEqual([second.runId, first.runId]);
  });

  it('applies the run creation rules with the seed\'s error strings', async () => {
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ profile: 'nope' }, 400, 'unknown_profile: nope'],
      [{ profile: 'demo', id: 'bad id!' }, 400, 'invalid run id'],
      [{ profile: 'demo', id: 'x'.repeat(129) }, 400, 'invalid run id'],
      [{ profile: 'demo', sessionId: 'sess/../x' }, 400, 'invalid session id'],
      [{ profile: 'demo', sessionId: '' }, 400, 'invalid session id'],
      [{ profile: 'demo', sessionId: 'sess-00000000-missing' }, 404, 'unknown session: sess-00000000-missing'],
    ];
    for (const [body, status, error] of cases) {
      const res = await svc.api('/api/runs', { method: 'POST', json: body });
      expect([res.status, (await res.json()).error]).toEqual([status, error]);
    }
  });

  it('cancels a running run cooperatively: 204, status cancelled, one terminal event, idempotent', async () => {
    const seen = new Set(fake.requests);
    const { runId } = await startRun({ profile: 'fake', prompt: 'SLOW_DELTAS 200 50' });
    const reader = stream(runId);
    await fake.when(() => fake.requests.some((r) => JSON.stringify(r.body).includes(`SLOW_DELTAS 200 50`) && !seen.has(r)));
    expect((await svc.api(`/api/runs/${runId}`, { method: 'DELETE' })).status).toBe(204);
    const evs = events(await reader);
    expect(evs.filter((e) => e.type === 'result' || e.type === 'error')).toHaveLength(1);
    expect(evs.at(-1)).toMatchObject({ type: 'error', message: 'run cancelled' });
    expect((await (await svc.api(`/api/runs/${runId}`)).json()).status).toBe('cancelled');
    expect((await svc.api(`/api/runs/${runId}`, { method: 'DELETE' })).status).toBe(204);
    expect((await (await svc.api(`/api/runs/${runId}`)).json()).status).toBe('cancelled');
  });

  it('force-terminates with the result shape, and reports unknown runs with a warning', async () => {
    const seen = new Set(fake.requests);
    const { runId, sessionId } = await startRun({ profile: 'fake', prompt: 'SLOW_DELTAS 200 50' });
    await fake.when(() => fake.requests.some((r) => JSON.stringify(r.body).includes(`SLOW_DELTAS 200 50`) && !seen.has(r)));
    const res = await svc.api(`/api/runs/${runId}/terminate`, { method: 'POST' });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ runId, cancelled: true, sessionReleased: true, statusWritten: true, sessionId, warnings: [] });
    expect((await (await svc.api(`/api/runs/${runId}`)).json()).status).toBe('cancelled');
    const unknown = await (await svc.api('/api/runs/run_unknown/terminate', { method: 'POST' })).json();
    expect(unknown).toEqual({ runId: 'run_unknown', cancelled: false, sessionReleased: false, claimStolen: false, statusWritten: false, sessionId: '', warnings: ['run_not_found'] });
  });

  it('pages profiles, runs and sessions with X-Total-Count', async () => {
    for (const path of ['/api/profiles', '/api/runs', '/api/sessions']) {
      const full = await (await svc.api(path)).json();
      const res = await svc.api(`${path}?limit=1&offset=1`);
      expect(Number(res.headers.get('x-total-count'))).toBe(full.length);
      expect(await res.json()).toEqual(full.slice(1, 2));
    }
    const runs = await (await svc.api('/api/runs')).json();
    const started = runs.map((r: { startedAt: string }) => r.startedAt);
    expect([...started].sort().reverse()).toEqual(started); // newest first
    const byProfile = await (await svc.api('/api/profiles/demo/runs')).json();
    expect(byProfile.every((r: { subTask: { profile: string } }) => r.subTask.profile === 'demo')).toBe(true);
    const q = await (await svc.api('/api/sessions?limit=50&q=sess-')).json();
    expect(q.length).toBeGreaterThan(0);
  });

  it('validates profiles: runtime enum, model form per runtime, worker mode, substrate, unknown skills', async () => {
    const bad: Array<[Record<string, unknown>, RegExp]> = [
      [{ name: 'p', runtime: 'gpt' }, /^runtime: /],
      [{ name: 'p', runtime: 'general', model: 'gpt-4o' }, /^model: expected <provider>:<model_id>/],
      [{ name: 'p', runtime: 'general', model: 'nowhere:x' }, /^model: /],
      [{ name: 'p', runtime: 'runtime_a', model: 'anthropic:claude' }, /^model: expected a bare model id/],
      [{ name: 'p', runtime: 'general', workerMode: 'fleet' }, /^workerMode: /],
      [{ name: 'p', runtime: 'general', workerSubstrate: 'vm' }, /^workerSubstrate: /],
      [{ name: 'p', runtime: 'general', skills: ['no-such-skill'] }, /^unknown skill: no-such-skill$/],
      [{ name: 'bad name!', runtime: 'general' }, /^name: /],
    ];
    for (const [body, error] of bad) {
      const res = await svc.api('/api/profiles', { method: 'POST', json: body });
      expect(res.status).toBe(400);
      expect((await res.json()).error).toMatch(error);
    }
    expect((await svc.api('/api/profiles/p')).status).toBe(404);
  });

  it('creates, replaces and deletes profiles, and computes workerPlacement on read only', async () => {
    const created = await svc.api('/api/profiles', { method: 'POST', json: { name: 'sandboxed', runtime: 'general', model: 'demo:x', workerMode: 'sandbox', workerPlacement: { substrate: 'forged' } } });
    expect(created.status).toBe(201);
    const body = await created.json();
    // computed from the live runner (its process substrate), never taken from the body
    expect(body.workerPlacement).toEqual({ substrate: 'process', source: 'runner-default', servable: true });
    expect((await svc.api('/api/profiles', { method: 'POST', json: { name: 'sandboxed', runtime: 'general' } })).status).toBe(409);
    const replaced = await svc.api('/api/profiles/sandboxed', { method: 'PUT', json: { name: 'sandboxed', runtime: 'general', model: 'demo:y' } });
    expect(await replaced.json()).toEqual({ name: 'sandboxed', runtime: 'general', model: 'demo:y', id: body.id, pinned: false });
    expect((await svc.api('/api/profiles/sandboxed', { method: 'DELETE' })).status).toBe(204);
    expect((await svc.api('/api/profiles/sandboxed')).status).toBe(404);
  });

  it('creates and deletes pools with an id, and pages them', async () => {
    const res = await svc.api('/api/pools', { method: 'POST', json: { name: 'team', members: [{ profile: 'demo', role: 'lead' }, { profile: 'fake' }], fs: { read: ['/pool/{pool}/**'] } } });
    expect(res.status).toBe(201);
    const pool = await res.json();
    expect(pool).toMatchObject({ name: 'team', id: expect.stringMatching(/^pool_/), members: [{ profile: 'demo', role: 'lead' }, { profile: 'fake', role: 'member' }] });
    const page = await svc.api('/api/pools?limit=10');
    expect(page.headers.get('x-total-count')).toBe('1');
    expect((await svc.api('/api/pools', { method: 'POST', json: { name: 'bad', members: [{ profile: 'x', role: 'boss' }] } })).status).toBe(400);
    expect((await svc.api('/api/pools/team', { method: 'DELETE' })).status).toBe(204);
    expect((await svc.api('/api/pools/team', { method: 'DELETE' })).status).toBe(404);
  });

  it('deletes a session on its runner and refuses further runs on it with 404', async () => {
    const { runId, sessionId } = await startRun({ profile: 'demo', prompt: 'bye' });
    await stream(runId);
    expect((await svc.api(`/api/sessions/${sessionId}`, { method: 'DELETE' })).status).toBe(204);
    expect((await (await svc.api(`/api/sessions/${sessionId}`)).json()).status).toBe('shutdown');
    const again = await svc.api('/api/runs', { method: 'POST', json: { profile: 'demo', sessionId } });
    expect(again.status).toBe(404);
    expect((await svc.api(`/api/sessions/${sessionId}/worker`)).status).toBe(404);
  });

  it('answers lease and topology routes', async () => {
    expect(await (await svc.api('/api/worker/leases')).json()).toEqual([]);
    const topo = await svc.api('/api/topology');
    expect(topo.status).toBe(404); // a single-runner conductor has no topology
  });
});
