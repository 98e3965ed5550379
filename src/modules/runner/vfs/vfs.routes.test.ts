import { afterEach, describe, expect, it } from 'vitest';
import { call, makeRunner, newSession, putProfile } from '../runner.fixture.ts';
import type { Runner } from '../runner.ts';

let runner: Runner;
afterEach(() => runner?.close());

describe('VFS leases', () => {
  it('gives every new session a lease, unrestricted when the profile sets no mounts', async () => {
    runner = makeRunner();
    await putProfile(runner, { name: 'helper' }, 'acme');
    const id = await newSession(runner, 'helper', 'acme');
    const res = await call(runner, 'GET', `/runner/sessions/${id}/vfs`, { tenant: 'acme' });
    expect(res.status).toBe(200);
    const lease = await res.json();
    expect(lease).toEqual({ sessionId: id, allowedMounts: [], allocatedAt: expect.any(String) });
    expect(Date.parse(lease.allocatedAt)).not.toBeNaN();
  });

  it('names the allowed mounts of a restricted profile', async () => {
    runner = makeRunner();
    await putProfile(runner, { name: 'scratch-only', fs: { allowedMounts: ['/work'] } });
    const id = await newSession(runner, 'scratch-only');
    expect((await (await call(runner, 'GET', `/runner/sessions/${id}/vfs`)).json()).allowedMounts).toEqual(['/work']);
  });

  it('answers 404 no vfs session for an unknown, foreign or deleted session', async () => {
    runner = makeRunner();
    await putProfile(runner, { name: 'helper' }, 'acme');
    const id = await newSession(runner, 'helper', 'acme');
    for (const [path, tenant] of [['/runner/sessions/nope/vfs', 'acme'], [`/runner/sessions/${id}/vfs`, 'intruder']]) {
      const res = await call(runner, 'GET', path, { tenant });
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ error: 'no vfs session' });
    }
    await call(runner, 'DELETE', `/runner/sessions/${id}`, { tenant: 'acme' });
    expect((await call(runner, 'GET', `/runner/sessions/${id}/vfs`, { tenant: 'acme' })).status).toBe(404);
  });

  it('lists the tenant\'s leases, every lease without a tenant header, and [] when there are none', async () => {
    runner = makeRunner();
    expect(await (await call(runner, 'GET', '/runner/vfs/leases')).json()).toEqual([]);
    await putProfile(runner, { name: 'helper' }, 'acme');
    await putProfile(runner, { name: 'helper' }, 'globex');
    const a = await newSession(runner, 'helper', 'acme');
    const g = await newSession(runner, 'helper', 'globex');
    const ids = async (tenant?: string) => ((await (await call(runner, 'GET', '/runner/vfs/leases', { tenant })).json()) as any[]).map((l) => l.sessionId);
    expect(await ids('acme')).toEqual([a]);
    expect(await ids('globex')).toEqual([g]);
    expect(await ids()).toEqual([a, g].sort());
  });
});
