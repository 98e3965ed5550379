import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { tmpdir } from 'node:os';
import { sql } from 'kysely';
import { openDatabase, withSystem, type Database } from '../../src/db/index.ts';
import { server } from '../support/backends.ts';
import { startTestSvc, type TestSvc } from '../support/svc.ts';
import { lastUserPrompt, modelRequests, startFakeProvider, type FakeProvider } from '../support/fake-provider.ts';
import { followPlan } from '../support/workflows.ts';

/** Workflow runs through the real HTTP surface of one `all` instance: validation, execution, the plan stream, repair, cancel. */
let svc: TestSvc;
let fake: FakeProvider;
let cleanup: () => Promise<void>;
let database: Database;

beforeAll(async () => {
  fake = await startFakeProvider();
  const db = await server.setup();
  cleanup = db.cleanup;
  database = await openDatabase({ url: db.url, dataDir: tmpdir() });
  svc = await startTestSvc({ DATABASE_URL: db.url, OPENAI_COMPATIBLE_BASE_URL: fake.url, OPENAI_COMPATIBLE_API_KEY: 'x' }, 'all');
  expect((await svc.api('/api/profiles', { method: 'POST', json: { name: 'fake', runtime: 'general', model: 'openai-compatible:fake-model' } })).status).toBe(201);
});
afterAll(async () => {
  await database?.close();
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

  it('refuses neither or both of nodes and definitionId, answers 404 for an unknown run, and 400 for a Last-Event-ID it never sent', async () => {
    expect((await call('POST', '/api/workflows/runs', {})).body.error).toMatch(/^nodes: required/);
    expect((await call('POST', '/api/workflows/runs', { nodes: [node('a', 'x')], definitionId: 'wfd_x' })).status).toBe(400);
    expect((await call('GET', '/api/workflows/runs/wfr_nope')).status).toBe(404);
    expect((await call('POST', '/api/workflows/runs/wfr_nope/start')).status).toBe(404);
    expect((await call('GET', '/api/workflows/runs/wfr_nope/stream')).status).toBe(404);
    const pending = await create({ autoStart: false, nodes: [node('a', 'x')] });
    expect((await call('GET', `/api/workflows/runs/${pending.id}/stream`, undefined, { 'Last-Event-ID': '7' })).body.error).toBe('Last-Event-ID: this workflow run has no event 7 (its last is 0)');
    expect((await call('GET', `/api/workflows/runs/${pending.id}/stream`, undefined, { 'Last-Event-ID': 'later' })).status).toBe(400);
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

describe('workflow runs: failures and repair', () => {
  const failing = async (tag: string, prompt: string, more: any[] = []) => {
    const run = await create({ name: `repair-${tag}`, nodes: [node('x', prompt), node('y', `after x: {{nodes.x.output}}`, ['x']), ...more] });
    const paused = await until(run.id, 'paused');
    expect(nodeOf(paused, 'x')).toMatchObject({ status: 4, statusLabel: 'error', error: expect.stringMatching(/^run error/) });
    expect(nodeOf(paused, 'y')).toMatchObject({ statusLabel: 'pending', runId: null });
    return paused;
  };
  const repair = (id: string, body: unknown) => call('POST', `/api/workflows/runs/${id}/repair`, body);

  it('a failing node pauses the run; retry_node runs it again and the run completes', async () => {
    const run = await failing('retry', 'FAIL_FIRST_1_HTTP_400 retry me');
    const firstRunId = nodeOf(run, 'x').runId;
    expect((await call('GET', `/api/runs/${firstRunId}`)).body.status).toBe('error');
    const res = await repair(run.id, { action: 'retry_node', nodeId: 'x' });
    expect(res.status).toBe(202);
    const done = await until(run.id, 'completed');
    expect(nodeOf(done, 'x')).toMatchObject({ statusLabel: 'ok', error: null, output: 'FAKE-REPLY:  retry me' }); // the fake drops its directive
    expect(nodeOf(done, 'x').runId).not.toBe(firstRunId);
    expect(nodeOf(done, 'y').output).toBe(`FAKE-REPLY: after x: ${nodeOf(done, 'x').output}`);
    // a run that is not paused cannot be repaired
    expect((await repair(run.id, { action: 'retry_node', nodeId: 'x' })).status).toBe(409);
  });

  it('refuses a repair it cannot apply with 400 or 404, changing nothing', async () => {
    const run = await failing('bad', 'FAIL_HTTP_400 bad repairs');
    expect((await repair(run.id, { action: 'retry_node', nodeId: 'y' })).body.error).toBe('node y is pending; retry_node applies to a node in error');
    expect((await repair(run.id, { action: 'retry_node', nodeId: 'nope' })).status).toBe(404);
    expect((await repair(run.id, { action: 'retry_node' })).body.error).toBe('nodeId: required for retry_node');
    expect((await repair(run.id, { action: 'explode', nodeId: 'x' })).status).toBe(400);
    expect((await repair(run.id, { action: 'add_dependency', nodeId: 'x', dependsOn: ['y'] })).body.error).toBe('nodes: cycle: x → y → x');
    expect((await repair(run.id, { action: 'replace_node', nodeId: 'x', node: { profile: 'nobody' } })).body.error).toBe('nodes: node x: unknown_profile: nobody');
    expect(await get(run.id)).toEqual(run);
  });

  it('replace_node gives a failed node a new prompt, and the run completes with it', async () => {
    const run = await failing('replace', 'FAIL_HTTP_400 replace me');
    const res = await repair(run.id, { action: 'replace_node', nodeId: 'x', node: { prompt: 'the fixed step' } });
    expect(res.status).toBe(202);
    expect(nodeOf(res.body.workflowRun, 'x')).toMatchObject({ prompt: 'the fixed step' });
    const done = await until(run.id, 'completed');
    expect(nodeOf(done, 'x')).toMatchObject({ statusLabel: 'ok', output: 'FAKE-REPLY: the fixed step' });
    expect(nodeOf(done, 'y').output).toBe('FAKE-REPLY: after x: FAKE-REPLY: the fixed step');
  });

  it('add_dependency makes a node wait for another one; the run resumes once nothing in error holds it', async () => {
    const run = await failing('adddep', 'FAIL_FIRST_1_HTTP_400 add a dependency', [node('q', 'HOLD adddep q')]);
    await held('adddep', 1);
    const res = await repair(run.id, { action: 'add_dependency', nodeId: 'y', dependsOn: ['q'] });
    expect(res.status).toBe(202);
    // x is still in error: the run stays paused
    expect(res.body.workflowRun).toMatchObject({ statusLabel: 'paused' });
    expect(nodeOf(res.body.workflowRun, 'y').dependsOn).toEqual(['x', 'q']);
    await repair(run.id, { action: 'retry_node', nodeId: 'x' });
    // x succeeds, y still waits for q
    await vi.waitFor(async () => expect(nodeOf(await get(run.id), 'x').statusLabel).toBe('ok'), { timeout: 20_000, interval: 100 });
    expect(nodeOf(await get(run.id), 'y').statusLabel).toBe('pending');
    fake.release('adddep');
    const done = await until(run.id, 'completed');
    expect(Date.parse(nodeOf(done, 'y').startedAt)).toBeGreaterThanOrEqual(Date.parse(nodeOf(done, 'q').finishedAt));
  });

  it('abort fails a paused run and cancels what has not run', async () => {
    const run = await failing('abort', 'FAIL_HTTP_400 abort me');
    const res = await repair(run.id, { action: 'abort' });
    expect(res.status).toBe(202);
    expect(res.body.workflowRun).toMatchObject({ status: 4, statusLabel: 'failed', finishedAt: expect.any(String) });
    expect(res.body.workflowRun.nodes.map((n: any) => n.statusLabel)).toEqual(['error', 'cancelled']);
    expect((await repair(run.id, { action: 'abort' })).status).toBe(409);
  });

  it('onError fail fails the run; onError continue lets dependants run and the run completes', async () => {
    const failed = await create({ nodes: [node('x', 'FAIL_HTTP_400 fail fast', [], { onError: 'fail' }), node('y', 'then', ['x'])] });
    const f = await until(failed.id, 'failed');
    expect(f.nodes.map((n: any) => n.statusLabel)).toEqual(['error', 'cancelled']);
    const cont = await create({ nodes: [node('x', 'FAIL_HTTP_400 carry on', [], { onError: 'continue' }), node('y', 'then [{{nodes.x.output}}]', ['x'])] });
    const c = await until(cont.id, 'completed');
    expect(c.nodes.map((n: any) => n.statusLabel)).toEqual(['error', 'ok']);
    expect(nodeOf(c, 'y').output).toBe('FAKE-REPLY: then []');
  });
});

describe('workflow runs: cancel and node updates', () => {
  it('cancel mid-run cancels the running nodes and their runs and the pending ones; a second cancel changes nothing', async () => {
    const run = await create({ nodes: [node('m1', 'HOLD cancelme one'), node('m2', 'HOLD cancelme two'), node('m3', 'last', ['m1', 'm2'])] });
    await held('cancelme', 2);
    const live = stream(run.id);
    const res = await call('POST', `/api/workflows/runs/${run.id}/cancel`);
    expect(res.status).toBe(202);
    expect(res.body.workflowRun).toMatchObject({ status: 5, statusLabel: 'cancelled' });
    expect(res.body.workflowRun.nodes.map((n: any) => n.statusLabel)).toEqual(['cancelled', 'cancelled', 'cancelled']);
    const frames = await live.ended;
    expect(frames.at(-1)!.data.workflowRun.statusLabel).toBe('cancelled');
    for (const id of ['m1', 'm2']) expect((await call('GET', `/api/runs/${nodeOf(res.body.workflowRun, id).runId}`)).body.status).toBe('cancelled');
    fake.release('cancelme');
    const again = await call('POST', `/api/workflows/runs/${run.id}/cancel`);
    expect(again.body.workflowRun).toEqual(res.body.workflowRun);
    // start is idempotent for a run that is not pending
    expect((await call('POST', `/api/workflows/runs/${run.id}/start`)).body.workflowRun).toMatchObject({ status: 'cancelled' });
  });

  it('sets a node that has not started: ok with an output feeds its dependants; bad updates are 400 or 404', async () => {
    const run = await create({ autoStart: false, nodes: [node('given', 'never runs'), node('uses', 'got [{{nodes.given.output}}]', ['given']), node('dropped', 'x')] });
    const path = `/api/workflows/runs/${run.id}/nodes`;
    expect((await call('POST', `${path}/given`, { status: 'running' })).body.error).toMatch(/^status: expected one of ok, error, skipped, cancelled/);
    expect((await call('POST', `${path}/ghost`, { status: 'ok' })).status).toBe(404);
    expect((await call('POST', `/api/workflows/runs/wfr_ghost/nodes/given`, { status: 'ok' })).status).toBe(404);
    const set = await call('POST', `${path}/given`, { status: 'ok', output: 'handmade' });
    expect(set.status).toBe(202);
    expect(nodeOf(set.body.workflowRun, 'given')).toMatchObject({ status: 3, output: 'handmade', runId: null });
    expect((await call('POST', `${path}/given`, { status: 'skipped' })).body.error).toBe('node given is ok; only a pending or ready node can be set');
    expect((await call('POST', `${path}/dropped`, { status: 'skipped' })).status).toBe(202);
    await call('POST', `/api/workflows/runs/${run.id}/start`);
    const done = await until(run.id, 'completed');
    expect(done.nodes.map((n: any) => n.statusLabel)).toEqual(['ok', 'ok', 'skipped']);
    expect(nodeOf(done, 'uses').output).toBe('FAKE-REPLY: got [handmade]');
  });
});

describe('workflow definitions', () => {
  it('creates, lists, gets, updates and deletes a definition; a run started from it carries its nodes and name', async () => {
    const nodes = [node('a', 'define {{input}}'), node('b', 'then <{{nodes.a.output}}>', ['a'])];
    const res = await call('POST', '/api/workflows/definitions', { name: 'pipeline', nodes });
    expect(res.status).toBe(201);
    const def = res.body.workflowDefinition;
    expect(def).toEqual({ id: expect.stringMatching(/^wfd_/), name: 'pipeline', nodes: nodes.map((n) => ({ ...n, onError: 'pause' })), createdAt: expect.any(String), updatedAt: expect.any(String) });
    expect((await call('GET', `/api/workflows/definitions/${def.id}`)).body.workflowDefinition).toEqual(def);
    const list = await call('GET', '/api/workflows/definitions');
    expect(list.body.map((d: any) => d.id)).toContain(def.id);
    expect(Number(list.headers.get('x-total-count'))).toBeGreaterThanOrEqual(1);

    const run = await create({ definitionId: def.id, input: 'topic' });
    expect(run).toMatchObject({ name: 'pipeline', definitionId: def.id, status: 'running' });
    const done = await until(run.id, 'completed');
    expect(nodeOf(done, 'b').output).toBe('FAKE-REPLY: then <FAKE-REPLY: define topic>');

    const updated = await call('PUT', `/api/workflows/definitions/${def.id}`, { name: 'pipeline-2', nodes: [node('only', 'one')] });
    expect(updated.body.workflowDefinition).toMatchObject({ name: 'pipeline-2', nodes: [{ id: 'only' }] });
    expect((await get(run.id)).nodes.map((n: any) => n.id)).toEqual(['a', 'b']);
    expect((await call('DELETE', `/api/workflows/definitions/${def.id}`)).status).toBe(204);
    expect((await call('GET', `/api/workflows/definitions/${def.id}`)).status).toBe(404);
    expect((await call('POST', '/api/workflows/runs', { definitionId: def.id })).body.error).toBe(`definitionId: unknown workflow definition: ${def.id}`);
  });

  it('refuses a definition without a name or nodes, or with a cycle, and an update that would make one', async () => {
    expect((await call('POST', '/api/workflows/definitions', { nodes: [node('a', 'x')] })).body.error).toMatch(/^name: required/);
    expect((await call('POST', '/api/workflows/definitions', { name: 'empty', nodes: [] })).body.error).toMatch(/^nodes: /);
    const cyc = await call('POST', '/api/workflows/definitions', { name: 'loop', nodes: [node('a', 'x', ['b']), node('b', 'y', ['a'])] });
    expect(cyc).toMatchObject({ status: 400, body: { error: 'nodes: cycle: a → b → a' } });
    const def = (await call('POST', '/api/workflows/definitions', { name: 'fine', nodes: [node('a', 'x')] })).body.workflowDefinition;
    expect((await call('PUT', `/api/workflows/definitions/${def.id}`, { nodes: [node('a', 'x', ['a'])] })).status).toBe(400);
    expect((await call('GET', `/api/workflows/definitions/${def.id}`)).body.workflowDefinition).toEqual(def);
    expect((await call('PUT', '/api/workflows/definitions/wfd_ghost', { name: 'x' })).status).toBe(404);
    expect((await call('DELETE', '/api/workflows/definitions/wfd_ghost')).status).toBe(404);
  });
});

describe('workflow schedules', () => {
  it('creates, lists, gets, pauses, resumes and deletes a schedule; an every-second schedule starts runs of its definition', async () => {
    const def = (await call('POST', '/api/workflows/definitions', { name: 'ticking', nodes: [node('t', 'tick')] })).body.workflowDefinition;
    const res = await call('POST', '/api/workflows/schedules', { workflowDefinitionId: def.id, cron: '* * * * * *' });
    expect(res.status).toBe(201);
    const s = res.body.workflowSchedule;
    expect(s).toEqual({
      id: expect.stringMatching(/^wfs_/),
      workflowDefinitionId: def.id,
      cron: '* * * * * *',
      timezone: 'UTC',
      status: 'active',
      nextRunAt: expect.any(String),
      lastFiredAt: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const runsOf = async () => (await call('GET', `/api/workflows/runs?scheduleId=${s.id}`)).body as any[];
    await vi.waitFor(async () => expect((await runsOf()).filter((r) => r.statusLabel === 'completed').length).toBeGreaterThanOrEqual(2), { timeout: 20_000, interval: 200 });
    const paused = await call('POST', `/api/workflows/schedules/${s.id}/pause`);
    expect(paused.body.workflowSchedule).toMatchObject({ status: 'paused', nextRunAt: null, lastFiredAt: expect.any(String) });
    const runs = await runsOf();
    expect(runs[0]).toMatchObject({ name: 'ticking', definitionId: def.id, scheduleId: s.id, scheduledFor: expect.any(String) });
    expect(new Set(runs.map((r) => r.scheduledFor)).size).toBe(runs.length);
    expect((await call('GET', `/api/workflows/schedules/${s.id}`)).body.workflowSchedule).toEqual(paused.body.workflowSchedule);
    expect((await call('GET', '/api/workflows/schedules')).body.map((x: any) => x.id)).toContain(s.id);
    const resumed = await call('POST', `/api/workflows/schedules/${s.id}/resume`);
    expect(resumed.body.workflowSchedule).toMatchObject({ status: 'active', nextRunAt: expect.any(String) });
    expect((await call('DELETE', `/api/workflows/definitions/${def.id}`)).status).toBe(409);
    expect((await call('DELETE', `/api/workflows/schedules/${s.id}`)).status).toBe(204);
    expect((await call('GET', `/api/workflows/schedules/${s.id}`)).status).toBe(404);
    expect((await call('POST', `/api/workflows/schedules/${s.id}/pause`)).status).toBe(404);
  });

  it.each([
    [{ cron: '0 0 30 2 *' }, /^cron: .*never fires/],
    [{ cron: 'often' }, /^cron: /],
    [{ timezone: 'Mars/Olympus' }, /^timezone: unknown IANA timezone/],
    [{ workflowDefinitionId: 'wfd_ghost' }, /^workflowDefinitionId: unknown workflow definition: wfd_ghost/],
    [{ workflowDefinitionId: undefined }, /^workflowDefinitionId: required/],
  ])('refuses %o with 400 naming the field', async (patch, message) => {
    const def = (await call('POST', '/api/workflows/definitions', { name: 'sched-bad', nodes: [node('t', 'x')] })).body.workflowDefinition;
    const res = await call('POST', '/api/workflows/schedules', { workflowDefinitionId: def.id, cron: '0 9 * * *', ...patch });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(message);
  });
});

describe('workflow runs: the crash windows between a claim and its run', () => {
  it('a node claimed by a conductor that died before creating its run ends in error (and pauses the run) after a minute', async () => {
    const run = await create({ autoStart: false, nodes: [node('lost', 'never created'), node('next', 'after', ['lost'])] });
    // what a conductor leaves when it dies right after committing the claim: the node running, its run id chosen, no run
    await withSystem(database.db, async (tx) => {
      await tx.updateTable('workflow_runs').set({ status: 1, started_at: sql<Date>`now() - interval '2 minutes'` }).where('id', '=', run.id).execute();
      await tx
        .updateTable('workflow_nodes')
        .set({ status: 2, run_id: 'run_never_created', started_at: sql<Date>`now() - interval '2 minutes'` })
        .where('workflow_run_id', '=', run.id)
        .where('id', '=', 'lost')
        .execute();
    });
    const paused = await until(run.id, 'paused');
    expect(nodeOf(paused, 'lost')).toMatchObject({ statusLabel: 'error', error: 'its run never started: the conductor that claimed it stopped first' });
    expect((await call('POST', `/api/workflows/runs/${run.id}/repair`, { action: 'retry_node', nodeId: 'lost' })).status).toBe(202);
    expect((await until(run.id, 'completed')).nodes.map((n: any) => n.statusLabel)).toEqual(['ok', 'ok']);
  }, 30_000);

  it('a node whose run ended without its end being delivered (the conductor handling it died) moves on by the sweep', async () => {
    const started = await call('POST', '/api/runs', { profile: 'fake', prompt: 'ended long ago' });
    expect(started.status).toBe(202);
    const runId = started.body.runId;
    // it ended, and (a run no workflow started) the workflows subscriber was never handed its end
    const delivered = async () =>
      (await sql<{ state: string }>`select state::text as state from pgboss.job where name = 'hooks.run-finished.workflows' and data->>'runId' = ${runId}`.execute(database.db)).rows.map((r) => r.state);
    await vi.waitFor(async () => expect((await call('GET', `/api/runs/${runId}`)).body.status).toBe('ok'), { timeout: 20_000, interval: 100 });
    expect(await delivered()).toEqual([]);
    const run = await create({ autoStart: false, nodes: [node('orphan', 'ended long ago'), node('next', 'after <{{nodes.orphan.output}}>', ['orphan'])] });
    // the node claimed with that run, whose end the hook never delivered to the workflow
    await withSystem(database.db, async (tx) => {
      await tx.updateTable('runs').set({ finished_at: sql<Date>`now() - interval '1 minute'` }).where('id', '=', runId).execute();
      await tx.updateTable('workflow_runs').set({ status: 1, started_at: sql<Date>`now() - interval '2 minutes'` }).where('id', '=', run.id).execute();
      await tx.updateTable('workflow_nodes').set({ status: 2, run_id: runId, started_at: sql<Date>`now() - interval '2 minutes'` }).where('workflow_run_id', '=', run.id).where('id', '=', 'orphan').execute();
    });
    const done = await until(run.id, 'completed');
    expect(nodeOf(done, 'orphan')).toMatchObject({ statusLabel: 'ok', runId, output: 'FAKE-REPLY: ended long ago' });
    expect(nodeOf(done, 'next').output).toBe('FAKE-REPLY: after <FAKE-REPLY: ended long ago>');
  }, 30_000);

  it('a scheduled run its conductor claimed but never started is started by the sweep', async () => {
    const run = await create({ autoStart: false, nodes: [node('only', 'scheduled work')] });
    await withSystem(database.db, (tx) =>
      tx
        .updateTable('workflow_runs')
        .set({ schedule_id: 'wfs_gone', scheduled_for: sql<Date>`now() - interval '1 minute'`, created_at: sql<Date>`now() - interval '1 minute'` })
        .where('id', '=', run.id)
        .execute(),
    );
    expect((await until(run.id, 'completed')).nodes[0].output).toBe('FAKE-REPLY: scheduled work');
  }, 30_000);
});
