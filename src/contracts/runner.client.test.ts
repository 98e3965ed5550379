import { afterEach, describe, expect, it } from 'vitest';
import { makeRunner, TEST_INTERNAL_TOKEN } from '../modules/runner/runner.fixture.ts';
import type { Runner } from '../modules/runner/index.ts';
import { CallError, createRunnerClient } from './runner.client.ts';

let runner: Runner;
afterEach(() => runner?.close());

const httpClient = (r: Runner, internalToken: string = TEST_INTERNAL_TOKEN) =>
  createRunnerClient({ baseUrl: 'http://runner.test:7070/', fetch: (req) => r.app.fetch(req), internalToken });

/** The contract's two transports: HTTP (the runner's routes) and direct (the runner module called in-process). */
const transports = [
  ['http', (r: Runner) => httpClient(r)],
  ['direct', (r: Runner) => r.direct('http://runner.test:7070')],
] as const;

describe.each(transports)('runner client over %s', (_transport, clientFor) => {
  it('drives profiles and sessions for one tenant, invisible to another', async () => {
    runner = makeRunner();
    const client = clientFor(runner);
    await client.putProfile('acme', { name: 'helper', runtime: 'general' });
    expect(await client.listProfiles('acme')).toEqual([{ name: 'helper', runtime: 'general' }]);
    const id = await client.createSession('acme', 'helper');
    expect(await client.getSession('acme', id)).toMatchObject({ id, profile: 'helper', status: 'idle' });
    expect((await client.listSessions('acme'))[0]).toMatchObject({ id, status: 0 });
    const err = await client.getSession('other', id).catch((e) => e);
    expect(err).toBeInstanceOf(CallError);
    expect(err).toMatchObject({ status: 404 });
    expect(err.message).toContain(`unknown session: ${id}`);
    const withProfile = await client.createSession('acme', 'writer', { name: 'writer', runtime: 'general', tools: ['@files'] });
    expect(await client.getSession('acme', withProfile)).toMatchObject({ id: withProfile, profile: 'writer' });
    expect(await client.listProfiles('acme')).toEqual(expect.arrayContaining([{ name: 'writer', runtime: 'general' }]));
    await expect(client.createSession('acme', 'other', { name: 'writer', runtime: 'general' })).rejects.toMatchObject({ status: 400, message: expect.stringContaining('profile.name') });
    await expect(client.createSession('acme', 'ghost')).rejects.toMatchObject({ status: 404 });
    await client.deleteSession('acme', id);
    expect(await client.sessionHealth('acme', id)).toEqual({ healthy: false, error: 'session shut down' });
  });

  it('reads info, runtimes, topology, health and metrics', async () => {
    runner = makeRunner();
    const client = clientFor(runner);
    expect((await client.info()).hash).toBe(runner.info().hash);
    expect(await client.runtimes()).toHaveLength(3);
    expect((await client.topology()).sidecars).toHaveLength(3);
    expect(await client.healthz()).toBe(true);
    expect(await client.metrics()).toContain('svc_runner_runs_started_total 0');
  });

  it('hydrates a session, reports an unknown session state as undefined and a failed export as 500', async () => {
    runner = makeRunner();
    const client = clientFor(runner);
    await client.putProfile('t', { name: 'p', runtime: 'general' });
    await client.hydrate('t', 'sess-x', { profileName: 'p', runtimeSessionId: 'r1' });
    expect(await client.getSession('t', 'sess-x')).toMatchObject({ runtimeSessionId: 'r1' });
    expect(await client.exportState('t', 'sess-unknown')).toBeUndefined();
    await expect(client.exportState('t', 'sess-x')).rejects.toMatchObject({ status: 500 });
  });

  it('streams a run to exactly one terminal event, and throws pre-stream refusals', async () => {
    runner = makeRunner();
    const client = clientFor(runner);
    await client.putProfile('t', { name: 'p', runtime: 'general' });
    const events = [];
    for await (const e of await client.run('t', { profile: 'p', prompt: 'hi' })) events.push(e);
    expect(events).toEqual([expect.objectContaining({ type: 'error', message: 'no worker configured for runtime general' })]);
    await expect(client.run('t', { profile: 'ghost' })).rejects.toMatchObject({ status: 404 });
  });

  it('reads toolkit specs, invokes a tool and reads VFS leases for one tenant', async () => {
    runner = makeRunner();
    const client = clientFor(runner);
    await client.putProfile('acme', { name: 'reader', runtime: 'general', tools: ['@files-read'] });
    const id = await client.createSession('acme', 'reader');
    expect((await client.toolkitSpecs()).map((s) => s.name)).toEqual(expect.arrayContaining(['fs_read', 'run_command', 'memory', 'memory_search']));
    expect((await client.toolkitSpecs()).length).toBe(11);
    expect((await client.sessionToolkitSpecs('acme', id)).map((s) => s.name)).toEqual(['fs_read', 'fs_list', 'fs_search']);
    expect(await client.invokeTool('acme', id, 'fs_list', {})).toEqual({ ok: true, value: { path: '/work', entries: [], truncated: false } });
    await expect(client.invokeTool('acme', id, 'fs_write', { path: 'a', content: 'b' })).rejects.toMatchObject({ status: 403 });
    expect(await client.vfsLease('acme', id)).toMatchObject({ sessionId: id, allowedMounts: [] });
    await expect(client.vfsLease('globex', id)).rejects.toMatchObject({ status: 404 });
    expect((await client.vfsLeases('acme')).map((l) => (l as { sessionId: string }).sessionId)).toEqual([id]);
    expect(await client.vfsLeases('globex')).toEqual([]);
  });

  it('keeps an adoptable run for re-attaching, refuses one without an id, and cancels only runs it has', async () => {
    runner = makeRunner();
    const client = clientFor(runner);
    await client.putProfile('t', { name: 'p', runtime: 'general' });
    const read = async (events: AsyncIterable<{ type: string; message?: string }>) => {
      const out = [];
      for await (const e of events) out.push(e);
      return out;
    };
    const first = await read(await client.run('t', { id: 'run-1', profile: 'p', prompt: 'hi' }, undefined, { adoptable: true }));
    expect(first).toEqual([expect.objectContaining({ type: 'error', message: 'no worker configured for runtime general' })]);
    expect(await read(await client.attach('t', 'run-1', 0))).toEqual(first);
    expect(await read(await client.attach('t', 'run-1', 1))).toEqual([expect.objectContaining({ type: 'error', message: 'stream ended without a result' })]);
    await expect(client.attach('other', 'run-1', 0)).rejects.toMatchObject({ name: 'CallError', status: 404, message: expect.stringContaining('unknown run: run-1') });
    await expect(client.run('t', { profile: 'p' }, undefined, { adoptable: true })).rejects.toMatchObject({ status: 400, message: expect.stringContaining('subTask.id') });
    expect(await client.cancelRun('t', 'run-1')).toBe(true);
    expect(await client.cancelRun('t', 'run-2')).toBe(false);
  });
});

describe('runner client over http', () => {
  it('fails with a 401 CallError when the token is wrong', async () => {
    runner = makeRunner({ internalToken: 'tok' });
    await expect(httpClient(runner, 'nope').info()).rejects.toMatchObject({ status: 401 });
  });

  it('turns a runner that cannot be reached into a CallError without a status', async () => {
    const client = createRunnerClient({ baseUrl: 'http://runner.test', fetch: () => Promise.reject(new TypeError('fetch failed')) });
    await expect(client.info()).rejects.toMatchObject({ name: 'CallError', status: undefined });
  });
});
