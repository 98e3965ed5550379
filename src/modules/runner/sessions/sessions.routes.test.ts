import { afterEach, describe, expect, it } from 'vitest';
import { SESSION_STATUS_CODES } from '../../../contracts/runner.ts';
import { runnerHash } from '../../../shared/ids.ts';
import { call, makeRunner, newSession, putProfile, refusedUrl, TEST_PUBLIC_URL } from '../runner.fixture.ts';
import type { Runner } from '../runner.ts';

let runner: Runner;
afterEach(() => runner?.close());

describe('runner sessions', () => {
  it('creates a session whose id carries the runner hash', async () => {
    runner = makeRunner();
    await putProfile(runner, { name: 'helper' });
    const res = await call(runner, 'POST', '/runner/sessions', { body: { profileName: 'helper' } });
    expect(res.status).toBe(201);
    const { sessionId } = await res.json();
    expect(sessionId).toMatch(new RegExp(`^sess-${runnerHash(TEST_PUBLIC_URL)}-[a-z0-9]+$`));
  });

  it('refuses an unknown profile with 404 naming it', async () => {
    runner = makeRunner();
    const res = await call(runner, 'POST', '/runner/sessions', { body: { profileName: 'ghost' } });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: 'unknown profile: ghost' });
  });

  it('stores a profile sent with the session, replacing the one it had, and refuses one of another name', async () => {
    runner = makeRunner();
    await putProfile(runner, { name: 'helper', runtime: 'runtime_b' });
    const res = await call(runner, 'POST', '/runner/sessions', { body: { profileName: 'helper', profile: { name: 'helper', runtime: 'general', model: 'openai:gpt-5' } } });
    expect(res.status).toBe(201);
    const { sessionId } = await res.json();
    expect((await (await call(runner, 'GET', `/runner/sessions/${sessionId}`)).json()).session).toMatchObject({ profile: 'helper', runtime: 'general' });
    expect((await (await call(runner, 'GET', '/runner/profiles')).json()).profiles).toEqual([{ name: 'helper', runtime: 'general' }]);
    const other = await call(runner, 'POST', '/runner/sessions', { body: { profileName: 'helper', profile: { name: 'other', runtime: 'general' } } });
    expect(other.status).toBe(400);
    expect((await other.json()).error).toMatch(/^profile\.name/);
  });

  it('creates a session that shares the sandbox of a live one (sandboxOf): the same files, left in place when it ends', async () => {
    runner = makeRunner();
    await putProfile(runner, { name: 'helper', tools: ['@default'] });
    const owner = await newSession(runner, 'helper');
    const invoke = (id: string, toolName: string, input: object) => call(runner, 'POST', `/runner/sessions/${id}/toolkit/invoke`, { body: { toolName, input } }).then((r) => r.json());
    await invoke(owner, 'fs_write', { path: 'shared.txt', content: 'from the owner' });
    const res = await call(runner, 'POST', '/runner/sessions', { body: { profileName: 'helper', sandboxOf: owner } });
    expect(res.status).toBe(201);
    const sharer = (await res.json()).sessionId;
    expect(await invoke(sharer, 'fs_read', { path: 'shared.txt' })).toMatchObject({ result: { ok: true, value: { content: 'from the owner' } } });
    await invoke(sharer, 'fs_write', { path: 'reply.txt', content: 'from the sharer' });
    expect(await invoke(owner, 'fs_read', { path: 'reply.txt' })).toMatchObject({ result: { ok: true, value: { content: 'from the sharer' } } });
    // a sharer that ends leaves the owner's files be
    expect((await call(runner, 'DELETE', `/runner/sessions/${sharer}`)).status).toBe(204);
    expect(await invoke(owner, 'fs_read', { path: 'shared.txt' })).toMatchObject({ result: { ok: true, value: { content: 'from the owner' } } });
    // only a live session of the same tenant can be shared
    const unknown = await call(runner, 'POST', '/runner/sessions', { body: { profileName: 'helper', sandboxOf: 'sess-nobody-here' } });
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error).toBe('sandboxOf: no live session sess-nobody-here on this runner');
    await putProfile(runner, { name: 'helper', tools: ['@default'] }, 'other');
    const otherTenant = await call(runner, 'POST', '/runner/sessions', { tenant: 'other', body: { profileName: 'helper', sandboxOf: owner } });
    expect(otherTenant.status).toBe(404);
    expect((await otherTenant.json()).error).toBe(`sandboxOf: no live session ${owner} on this runner`);
  });

  it('refuses a body without profileName with 400 naming the field', async () => {
    runner = makeRunner();
    const res = await call(runner, 'POST', '/runner/sessions', { body: {} });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(/^profileName: /);
  });

  it('reads a session back with a string status and lists it with an integer status', async () => {
    runner = makeRunner();
    await putProfile(runner, { name: 'helper', runtime: 'runtime_b' });
    const id = await newSession(runner, 'helper');
    const one = await (await call(runner, 'GET', `/runner/sessions/${id}`)).json();
    expect(one.session).toMatchObject({ id, profile: 'helper', runtime: 'runtime_b', status: 'idle', runCount: 0, lastPrompt: '', runtimeSessionId: '' });
    expect(one.session.createdAt).toBe(one.session.lastUsedAt);
    const list = await (await call(runner, 'GET', '/runner/sessions')).json();
    expect(list.sessions).toHaveLength(1);
    expect(list.sessions[0]).toMatchObject({ id, status: SESSION_STATUS_CODES.idle });
  });

  it('hides another tenant\'s session as unknown', async () => {
    runner = makeRunner();
    await putProfile(runner, { name: 'helper' }, 'acme');
    const id = await newSession(runner, 'helper', 'acme');
    for (const path of [`/runner/sessions/${id}`, `/runner/sessions/${id}/health`]) {
      const res = await call(runner, 'GET', path, { tenant: 'intruder' });
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ error: `unknown session: ${id}` });
    }
    expect((await call(runner, 'DELETE', `/runner/sessions/${id}`, { tenant: 'intruder' })).status).toBe(404);
    expect((await (await call(runner, 'GET', '/runner/sessions', { tenant: 'intruder' })).json()).sessions).toEqual([]);
    expect((await call(runner, 'GET', `/runner/sessions/${id}`, { tenant: 'acme' })).status).toBe(200);
  });

  it('keeps the profile snapshot taken at creation when the profile changes or goes away', async () => {
    runner = makeRunner();
    await putProfile(runner, { name: 'helper', runtime: 'general' });
    const id = await newSession(runner, 'helper');
    await putProfile(runner, { name: 'helper', runtime: 'runtime_a' });
    await call(runner, 'DELETE', '/runner/profiles/helper');
    const { session } = await (await call(runner, 'GET', `/runner/sessions/${id}`)).json();
    expect(session).toMatchObject({ profile: 'helper', runtime: 'general' });
  });

  it('shuts a session down on delete: status shutdown, health false with a reason', async () => {
    runner = makeRunner();
    await putProfile(runner, { name: 'helper' });
    const id = await newSession(runner, 'helper');
    expect((await call(runner, 'DELETE', `/runner/sessions/${id}`)).status).toBe(204);
    const list = await (await call(runner, 'GET', '/runner/sessions')).json();
    expect(list.sessions[0]).toMatchObject({ id, status: SESSION_STATUS_CODES.shutdown });
    expect(await (await call(runner, 'GET', `/runner/sessions/${id}/health`)).json()).toEqual({ healthy: false, error: 'session shut down' });
  });

  it('reports a session on a runtime without a worker as unhealthy', async () => {
    runner = makeRunner();
    await putProfile(runner, { name: 'helper' });
    const id = await newSession(runner, 'helper');
    const res = await call(runner, 'GET', `/runner/sessions/${id}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ healthy: false, error: 'no worker configured for runtime general' });
  });

  it('reports a session whose worker refuses connections as unhealthy, naming the worker', async () => {
    const url = await refusedUrl();
    runner = makeRunner({ config: { workerUrl: url } });
    await putProfile(runner, { name: 'helper' });
    const id = await newSession(runner, 'helper');
    const body = await (await call(runner, 'GET', `/runner/sessions/${id}/health`)).json();
    expect(body.healthy).toBe(false);
    expect(body.error).toContain(`worker unreachable at ${url}`);
  });
});
