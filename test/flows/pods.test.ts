import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSvc, type TestSvc } from '../support/svc.ts';

/** `/api/pods` (variant B) over the same pools as `/api/pools`, through one `all` instance. */
let svc: TestSvc;
beforeAll(async () => {
  svc = await startTestSvc({}, 'all');
});
afterAll(async () => {
  await svc?.stop();
});

const call = async (method: string, path: string, json?: unknown) => {
  const res = await svc.api(path, { method, ...(json !== undefined ? { json } : {}) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
};

describe('pods', () => {
  it('creates, gets, updates only the supplied fields, and is the same row as the pool', async () => {
    const created = await call('POST', '/api/pods', { name: 'team', description: 'the team', members: [{ profile: 'a', role: 'lead' }], fs: { read: ['{pool}/in'] } });
    expect(created).toMatchObject({ status: 201, body: { id: expect.stringMatching(/^pool_/), name: 'team', pinned: false, members: [{ profile: 'a', role: 'lead' }] } });
    expect((await call('POST', '/api/pods', { name: 'team' })).status).toBe(409);

    const patched = await call('PATCH', '/api/pods/team', { description: 'the new team' });
    expect(patched.body).toEqual({ id: created.body.id, name: 'team', description: 'the new team', members: [{ profile: 'a', role: 'lead' }], fs: { read: ['{pool}/in'] }, pinned: false });
    expect((await call('GET', '/api/pods/team')).body).toEqual(patched.body);
    expect((await call('GET', '/api/pools')).body).toEqual([{ id: created.body.id, name: 'team', description: 'the new team', members: [{ profile: 'a', role: 'lead' }], fs: { read: ['{pool}/in'] } }]);

    expect((await call('PATCH', '/api/pods/team', { name: 'renamed' })).status).toBe(400);
    expect((await call('PATCH', '/api/pods/nope', { description: 'x' })).status).toBe(404);
  });

  it('adds, re-roles and removes members, and says which member is missing', async () => {
    expect((await call('POST', '/api/pods/team/members', { profile: 'b' })).body.members).toEqual([{ profile: 'a', role: 'lead' }, { profile: 'b', role: 'member' }]);
    expect((await call('POST', '/api/pods/team/members', { profile: 'b', role: 'lead' })).body.members).toEqual([{ profile: 'a', role: 'lead' }, { profile: 'b', role: 'lead' }]);
    expect((await call('DELETE', '/api/pods/team/members/a')).body.members).toEqual([{ profile: 'b', role: 'lead' }]);
    expect(await call('DELETE', '/api/pods/team/members/a')).toMatchObject({ status: 404, body: { error: 'pod team has no member a' } });
    expect((await call('POST', '/api/pods/team/members', { role: 'lead' })).body.error).toMatch(/^profile: /);
  });

  it('lists pinned pods first, 200 at most by default, with X-Total-Count', async () => {
    for (const name of ['alpha', 'zeta']) expect((await call('POST', '/api/pods', { name })).status).toBe(201);
    expect((await call('POST', '/api/pods/zeta/pin')).body.pinned).toBe(true);
    const list = await call('GET', '/api/pods');
    expect(list.headers.get('x-total-count')).toBe('3');
    expect(list.body.map((p: any) => [p.name, p.pinned])).toEqual([['zeta', true], ['alpha', false], ['team', false]]);
    expect((await call('DELETE', '/api/pods/zeta/pin')).body.pinned).toBe(false);
    expect((await call('GET', '/api/pods?limit=1&offset=1')).body.map((p: any) => p.name)).toEqual(['team']);
  });

  it('deletes', async () => {
    expect((await call('DELETE', '/api/pods/alpha')).status).toBe(204);
    expect((await call('GET', '/api/pods/alpha')).status).toBe(404);
    expect((await call('DELETE', '/api/pods/alpha')).status).toBe(404);
  });
});
