import { afterEach, describe, expect, it } from 'vitest';
import { call, makeRunner, putProfile } from '../runner.fixture.ts';
import type { Runner } from '../runner.ts';

let runner: Runner;
afterEach(() => runner?.close());

const hydrate = (id: string, body: unknown, tenant?: string) => call(runner, 'POST', `/runner/sessions/${id}/hydrate`, { body, tenant });

describe('hydrate', () => {
  it('creates the session under the given id with the named profile and runtime session id', async () => {
    runner = makeRunner();
    await putProfile(runner, { name: 'helper', runtime: 'runtime_a' });
    const res = await hydrate('sess-abc-1', { profileName: 'helper', runtimeSessionId: 'rt-1', stateContentType: 'application/gzip' });
    expect(res.status).toBe(204);
    const { session } = await (await call(runner, 'GET', '/runner/sessions/sess-abc-1')).json();
    expect(session).toMatchObject({ id: 'sess-abc-1', profile: 'helper', runtime: 'runtime_a', status: 'idle', runtimeSessionId: 'rt-1' });
  });

  it('is idempotent: hydrating twice leaves one session', async () => {
    runner = makeRunner();
    await putProfile(runner, { name: 'helper' });
    expect((await hydrate('s1', { profileName: 'helper', runtimeSessionId: 'r', stateContentType: 'application/json' })).status).toBe(204);
    expect((await hydrate('s1', { profileName: 'helper', runtimeSessionId: 'r', stateContentType: 'application/json' })).status).toBe(204);
    expect((await (await call(runner, 'GET', '/runner/sessions')).json()).sessions).toHaveLength(1);
  });

  it('refuses a body without profileName with 400 naming the field', async () => {
    runner = makeRunner();
    const res = await hydrate('s1', { runtimeSessionId: 'r' });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(/^profileName: /);
  });

  it('refuses an unknown profile with 404', async () => {
    runner = makeRunner();
    const res = await hydrate('s1', { profileName: 'ghost', runtimeSessionId: 'r', stateContentType: 'application/json' });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: 'unknown profile: ghost' });
  });

  it('refuses an id taken by another tenant with 404 and leaves that session alone', async () => {
    runner = makeRunner();
    await putProfile(runner, { name: 'helper', runtime: 'general' }, 'acme');
    await putProfile(runner, { name: 'helper', runtime: 'runtime_b' }, 'intruder');
    await hydrate('s1', { profileName: 'helper' }, 'acme');
    const res = await hydrate('s1', { profileName: 'helper' }, 'intruder');
    expect(res.status).toBe(404);
    const { session } = await (await call(runner, 'GET', '/runner/sessions/s1', { tenant: 'acme' })).json();
    expect(session.runtime).toBe('general');
  });

  it('refuses a session id outside 1-128 letters, digits, underscore, hyphen', async () => {
    runner = makeRunner();
    await putProfile(runner, { name: 'helper' });
    const res = await hydrate('bad.id', { profileName: 'helper' });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: 'invalid session id' });
  });

  it.each([
    ['characters outside the alphabet', 'ab$d'],
    ['a length that is not a multiple of 4', 'abcde'],
    ['padding in the middle', 'ab==abcd'],
    ['url-safe alphabet', 'ab-_'],
    ['embedded whitespace', 'ab cd'],
  ])('refuses stateB64 with %s as 400 without touching any worker', async (_label, b64) => {
    runner = makeRunner();
    await putProfile(runner, { name: 'helper' });
    const res = await hydrate('s1', { profileName: 'helper', runtimeSessionId: 'r', stateContentType: 'application/json', stateB64: b64 });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(/^stateB64: not valid base64/);
    expect((await call(runner, 'GET', '/runner/sessions/s1')).status).toBe(404);
  });

  it('refuses a bundle that decodes past the size cap with 413', async () => {
    runner = makeRunner({ config: { stateCapBytes: 1024 } });
    await putProfile(runner, { name: 'helper' });
    const b64 = Buffer.alloc(1025, 7).toString('base64');
    const res = await hydrate('s1', { profileName: 'helper', runtimeSessionId: 'r', stateContentType: 'application/json', stateB64: b64 });
    expect(res.status).toBe(413);
    expect((await res.json()).error).toMatch(/over the size cap/);
    expect((await call(runner, 'GET', '/runner/sessions/s1')).status).toBe(404);
  });

  it('answers 503 for a valid bundle when no worker serves the runtime, and creates nothing', async () => {
    runner = makeRunner({ config: { stateCapBytes: 1024 } });
    await putProfile(runner, { name: 'helper' });
    const b64 = Buffer.alloc(1024, 7).toString('base64');
    const res = await hydrate('s1', { profileName: 'helper', runtimeSessionId: 'r', stateContentType: 'application/json', stateB64: b64 });
    expect(res.status).toBe(503);
    expect((await res.json()).error).toBe('cannot hydrate state: no worker configured for runtime general');
    expect((await call(runner, 'GET', '/runner/sessions/s1')).status).toBe(404);
  });
});

describe('state export', () => {
  it('answers 404 for an unknown session', async () => {
    runner = makeRunner();
    const res = await call(runner, 'GET', '/runner/sessions/nope/state');
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: 'unknown session: nope' });
  });

  it('answers 500 when no worker serves the session\'s runtime', async () => {
    runner = makeRunner();
    await putProfile(runner, { name: 'helper' });
    await hydrate('s1', { profileName: 'helper' });
    const res = await call(runner, 'GET', '/runner/sessions/s1/state');
    expect(res.status).toBe(500);
    expect((await res.json()).error).toBe('state export failed: no worker configured for runtime general');
  });
});
