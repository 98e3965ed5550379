import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { server } from '../support/backends.ts';
import { startTestSvc, type TestSvc } from '../support/svc.ts';
import { lastUserPrompt, modelRequests, startFakeProvider, type FakeProvider } from '../support/fake-provider.ts';
import { followPlan, type PlanFrame } from '../support/workflows.ts';

/** Workflow runs through the real HTTP surface of one `all` instance: validation, execution, the plan stream, repair, cancel. */
let svc: TestSvc;
let fake: FakeProvider;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  fake = await startFakeProvider();
  const db = await server.setup();
  cleanup = db.cleanup;
  svc = await startTestSvc({ DATABASE_URL: db.url, OPENAI_COMPATIBLE_BASE_URL: fake.url, OPENAI_COMPATIBLE_API_KEY: 'x' }, 'all');
  expect((await svc.api('/api/profiles', { method: 'POST', json: { name: 'fake', runtime: 'general', model: 'openai-compatible:fake-model' } })).status).toBe(201);
});
afterAll(async () => {
  await svc?.stop();
  await fake?.close();
  await cleanup?.();
});

const call = async (method: string, path: string, json?: unknown, headers: Record<string, string> = {}) => {
  const res = await svc.api(path, { method, headers, ...(json !== undefined ? { json } : {}) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
};
const node = (id: string, prompt: string, dependsOn: string[] = [], extra: Record<string, unknown> = {}) => ({ id, profile: 'fake', prompt, dependsOn, ...extra });
const create = async (body: Record<string, unknown>) => {
  const res = await call('POST', '/api/workflows/runs', body);
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body.workflowRun;
};
const get = async (id: string) => (await call('GET', `/api/workflows/runs/${id}`)).body.workflowRun;
const until = async (id: string, statusLabel: string) => {
  await vi.waitFor(async () => expect((await get(id)).statusLabel).toBe(statusLabel), { timeout: 20_000, interval: 100 });
  return get(id);
};
const nodeOf = (run: any, id: string) => run.nodes.find((n: any) => n.id === id);
const held = (name: string, n: number) => fake.when(() => modelRequests(fake).filter((r) => lastUserPrompt(r)?.includes(`HOLD ${name}`)).length >= n);
const stream = (id: string, lastEventId?: number) =>
  followPlan((signal) => svc.api(`/api/workflows/runs/${id}/stream`, { signal, headers: lastEventId === undefined ? {} : { 'Last-Event-ID': String(lastEventId) } }));

describe('workflow runs: validation', () => {
  it.each([
    [[node('a', 'x', ['b']), node('b', 'y', ['a'])], /^nodes: cycle: a → b → a$/],
    [[node('a', 'x', ['a'])], /^nodes: cycle: a → a$/],
    [[node('a', 'x', ['ghost'])], /^nodes: node a depends on unknown node: ghost$/],
    [[node('a', 'x'), node('a', 'y')], /^nodes: duplicate node id: a$/],
    [[node('a', 'x'), { id: 'b', profile: 'nobody', prompt: 'y' }], /^nodes: node b: unknown_profile: nobody$/],
    [[node('a', 'x'), node('b', 'uses {{nodes.a.output}}')], /^nodes: node b reads the output of a but does not depend on it$/],
    [[], /^nodes: expected >=1/],
    [[node('a', 'x', [], { onError: 'shrug' })], /^nodes\.0\.onError: expected \("pause" \| "fail" \| "continue"\)/],
  ])('refuses a bad graph with 400 naming the problem (%#)', async (nodes, message) => {
    const before = (await call('GET', '/api/workflows/runs')).headers.get('x-total-count');
    const res = await call('POST', '/api/workflows/runs', { nodes });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(message);
    expect((await call('GET', '/api/workflows/runs')).headers.get('x-total-count')).toBe(before);
  });

  it('refuses neither or both of nodes and definitionId, and answers 404 for an unknown run', async () => {
    expect((await call('POST', '/api/workflows/runs', {})).body.error).toMatch(/^nodes: required/);
    expect((await call('POST', '/api/workflows/runs', { nodes: [node('a', 'x')], definitionId: 'wfd_x' })).status).toBe(400);
    expect((await call('GET', '/api/workflows/runs/wfr_nope')).status).toBe(404);
    expect((await call('POST', '/api/workflows/runs/wfr_nope/start')).status).toBe(404);
    expect((await call('GET', '/api/workflows/runs/wfr_nope/stream')).status).toBe(404);
  });
});

describe('workflow runs: a diamond', () => {
  it('runs a → (b, c) → d with b and c at once, d reading both outputs, and streams every transition in order', async () => {
    const created = await create({
      name: 'diamond',
      autoStart: false,
      input: 'the input',
      nodes: [
        node('a', 'first step on {{input}}'),
        node('b', 'HOLD diamond b reads <{{nodes.a.output}}>', ['a']),
        node('c', 'HOLD diamond c reads <{{nodes.a.output}}>', ['a']),
        node('d', 'd joins [{{nodes.b.output}}] and [{{nodes.c.output}}]', ['b', 'c']),
      ],
    });
    expect(created).toMatchObject({ name: 'diamond', status: 'pending', statusLabel: 'pending', startedAt: null });
    expect(created.nodes.map((n: any) => [n.id, n.status, n.statusLabel, n.dependsOn])).toEqual([
      ['a', 0, 'pending', []],
      ['b', 0, 'pending', ['a']],
      ['c', 0, 'pending', ['a']],
      ['d', 0, 'pending', ['b', 'c']],
    ]);
    const live = stream(created.id);
    await vi.waitFor(() => expect(live.frames.length).toBe(1));

    const started = await call('POST', `/api/workflows/runs/${created.id}/start`);
    expect(started.status).toBe(202);
    expect(started.body.workflowRun).toMatchObject({ status: 'running', statusLabel: 'running' });

    // b and c are both at the model at once: neither answers until both have asked
    await held('diamond', 2);
    const mid = await get(created.id);
    expect([nodeOf(mid, 'b').statusLabel, nodeOf(mid, 'c').statusLabel, nodeOf(mid, 'd').statusLabel]).toEqual(['running', 'running', 'pending']);
    fake.release('diamond');

    const frames = await live.ended;
    const done = await get(created.id);
    expect(done).toMatchObject({ status: 3, statusLabel: 'completed', startedAt: expect.any(String), finishedAt: expect.any(String) });
    expect(done.nodes.map((n: any) => n.statusLabel)).toEqual(['ok', 'ok', 'ok', 'ok']);
    const [a, b, c, d] = done.nodes;
    expect(a.output).toBe('FAKE-REPLY: first step on the input');
    expect(b.output).toBe(`FAKE-REPLY: HOLD diamond b reads <${a.output}>`);
    // overlap, from the nodes' own times: each started before the other finished
    expect(Date.parse(b.startedAt)).toBeLessThan(Date.parse(c.finishedAt));
    expect(Date.parse(c.startedAt)).toBeLessThan(Date.parse(b.finishedAt));

    // d's model request carried both outputs
    const dPrompt = modelRequests(fake).map(lastUserPrompt).find((p) => p?.startsWith('d joins'));
    expect(dPrompt).toBe(`d joins [${b.output}] and [${c.output}]`);
    expect(d.output).toBe(`FAKE-REPLY: ${dPrompt}`);

    // every node ran as an ordinary run, listed in /api/runs
    const runs = (await call('GET', '/api/runs')).body as any[];
    for (const n of done.nodes) expect(runs.find((r) => r.id === n.runId)).toMatchObject({ status: 'ok', subTask: { profile: 'fake' } });

    // the stream: a snapshot, then one plan_status per change, numbered on, ending at the terminal status
    expect(frames[0]).toMatchObject({ event: 'snapshot', data: { workflowRun: { id: created.id, status: 0 } } });
    expect(frames.slice(1).every((f) => f.event === 'plan_status')).toBe(true);
    expect(frames.map((f) => f.id)).toEqual(frames.map((_, i) => frames[0].id + i));
    const changes = frames.slice(1).map((f) => `${f.data.change.nodeId ?? 'run'}:${f.data.change.statusLabel}`);
    const at = (s: string) => changes.indexOf(s);
    expect(changes[0]).toBe('run:running');
    expect(changes.slice(1, 4)).toEqual(['a:ready', 'a:running', 'a:ok']);
    for (const s of ['b:ready', 'c:ready', 'b:running', 'c:running', 'b:ok', 'c:ok', 'd:ready', 'd:running', 'd:ok']) expect(at(s), s).toBeGreaterThan(at('a:ok'));
    expect(at('b:running')).toBeLessThan(at('c:ok'));
    expect(at('c:running')).toBeLessThan(at('b:ok'));
    expect(at('d:ready')).toBeGreaterThan(Math.max(at('b:ok'), at('c:ok')));
    expect(changes.at(-1)).toBe('run:completed');
    expect(changes).toHaveLength(1 + 4 * 3 + 1);
    // each event's snapshot agrees with its change, and the last one is the run as GET shows it
    for (const f of frames.slice(1)) {
      const { nodeId, status } = f.data.change;
      expect(nodeId ? nodeOf(f.data.workflowRun, nodeId).status : f.data.workflowRun.status).toBe(status);
    }
    expect(frames.at(-1)!.data.workflowRun).toEqual(done);

    // Last-Event-ID resumes after the event named, without a snapshot
    const resumed = await stream(created.id, frames[5].id).ended;
    expect(resumed).toEqual(frames.slice(6));
    // a finished run's stream is its snapshot, then the end
    expect(await stream(created.id).ended).toEqual([{ id: frames.at(-1)!.id, event: 'snapshot', data: { workflowRun: done } }]);
  });

  it('lists runs newest first with filters, X-Total-Count and a limit capped at 200', async () => {
    const one = await create({ name: 'listed', autoStart: false, nodes: [node('a', 'x')] });
    const byName = await call('GET', '/api/workflows/runs?name=listed');
    expect(byName.body.map((r: any) => r.id)).toEqual([one.id]);
    expect(byName.body[0]).toMatchObject({ name: 'listed', status: 0, statusLabel: 'pending' });
    expect(byName.headers.get('x-total-count')).toBe('1');
    expect((await call('GET', '/api/workflows/runs?status=pending&name=listed')).body).toHaveLength(1);
    expect((await call('GET', '/api/workflows/runs?status=3&name=listed')).body).toHaveLength(0);
    expect((await call('GET', '/api/workflows/runs?status=sleepy')).status).toBe(400);
    expect((await call('GET', '/api/workflows/runs?limit=201')).status).toBe(400);
    const page = await call('GET', '/api/workflows/runs?limit=1&offset=0');
    expect(page.body).toHaveLength(1);
    expect(Number(page.headers.get('x-total-count'))).toBeGreaterThan(1);
  });
});
