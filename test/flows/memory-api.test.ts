import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { server } from '../support/backends.ts';
import { startTestSvc, type TestSvc } from '../support/svc.ts';

/**
 * Memory stores through `/api/memory-stores` as people use them: stores and their caps under the operator's ceilings,
 * entries by path with versions (optimistic concurrency, history, restore), per-user partitions, search, and
 * isolation between tenants.
 */
let svc: TestSvc;
let cleanup: () => Promise<void>;
let otherKey: string;

beforeAll(async () => {
  const db = await server.setup();
  cleanup = db.cleanup;
  svc = await startTestSvc({ DATABASE_URL: db.url, AGENT_ORC_ADMIN_TENANT: 'default', SVC_MEMORY_MAX_ENTRY_BYTES: '4096' }, 'all');
  expect((await svc.api('/api/tenants', { method: 'POST', json: { id: 'other', name: 'Other' } })).status).toBe(201);
  otherKey = ((await (await svc.api('/api/tenants/other/keys', { method: 'POST', json: { name: 'owner' } })).json()) as { token: string }).token;
});
afterAll(async () => {
  await svc?.stop();
  await cleanup?.();
});

const call = async (method: string, path: string, json?: unknown, key?: string) => {
  const res = await svc.api(path, { method, ...(json !== undefined ? { json } : {}), ...(key ? { key } : {}) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
};

describe('memory stores', () => {
  it('creates a store with caps under the ceilings, lists, reads, updates and deletes it', async () => {
    const created = await call('POST', '/api/memory-stores', { name: 'notes', description: 'What we learnt about customers', limits: { maxEntries: 10 } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^mst_/),
      name: 'notes',
      description: 'What we learnt about customers',
      scope: 'shared',
      limits: { maxEntries: 10, maxEntryBytes: 4096, maxTotalBytes: 10 * 1024 * 1024 },
      metadata: {},
      automationId: null,
      usage: { entries: 0, bytes: 0 },
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect((await call('POST', '/api/memory-stores', { name: 'notes' })).status).toBe(409);
    const over = await call('POST', '/api/memory-stores', { name: 'big', limits: { maxEntryBytes: 5000 } });
    expect(over).toMatchObject({ status: 400, body: { error: "limits.maxEntryBytes: at most 4096 (the operator's ceiling, SVC_MEMORY_MAX_ENTRY_BYTES)" } });
    expect((await call('POST', '/api/memory-stores', { name: 'automation-x' })).body.error).toMatch(/^name: the prefix automation- is kept/);
    expect((await call('POST', '/api/memory-stores', { name: 'bad name' })).body.error).toMatch(/^name: /);
    expect((await call('POST', '/api/memory-stores', { name: 'x', scope: 'team' })).body.error).toMatch(/^scope: /);

    expect((await call('GET', '/api/memory-stores')).body.map((s: any) => s.name)).toContain('notes');
    const patched = await call('PATCH', '/api/memory-stores/notes', { description: 'Customers', limits: { maxTotalBytes: 2048 } });
    expect(patched.body).toMatchObject({ description: 'Customers', limits: { maxEntries: 10, maxEntryBytes: 4096, maxTotalBytes: 2048 } });
    expect((await call('PATCH', '/api/memory-stores/notes', { name: 'renamed' })).status).toBe(400);

    expect((await call('POST', '/api/memory-stores', { name: 'scratch' })).status).toBe(201);
    expect((await call('PUT', '/api/memory-stores/scratch/entries/a.md', { content: 'x' })).status).toBe(201);
    expect((await call('DELETE', '/api/memory-stores/scratch')).status).toBe(204);
    expect((await call('GET', '/api/memory-stores/scratch')).status).toBe(404);
  });
});

describe('entries', () => {
  it('writes, reads, lists and deletes entries by path, each write a version', async () => {
    await call('POST', '/api/memory-stores', { name: 'kb' });
    const first = await call('PUT', '/api/memory-stores/kb/entries/customers/acme.md', { content: 'Acme prefers email.' });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ path: '/customers/acme.md', content: 'Acme prefers email.', bytes: 19, version: 1, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    const second = await call('PUT', '/api/memory-stores/kb/entries/customers/acme.md', { content: 'Acme prefers phone calls.' });
    expect(second).toMatchObject({ status: 200, body: { version: 2, id: first.body.id } });
    // the same content again changes nothing and adds no version
    expect((await call('PUT', '/api/memory-stores/kb/entries/customers/acme.md', { content: 'Acme prefers phone calls.' })).body.version).toBe(2);
    await call('PUT', '/api/memory-stores/kb/entries/customers/globex.md', { content: 'Globex: invoices in EUR.' });
    await call('PUT', '/api/memory-stores/kb/entries/style.md', { content: 'Be brief.' });

    expect((await call('GET', '/api/memory-stores/kb/entries/customers/acme.md')).body.content).toBe('Acme prefers phone calls.');
    expect((await call('GET', '/api/memory-stores/kb/entries')).body.map((e: any) => e.path)).toEqual(['/customers/acme.md', '/customers/globex.md', '/style.md']);
    expect((await call('GET', '/api/memory-stores/kb/entries?prefix=/customers')).body.map((e: any) => e.path)).toEqual(['/customers/acme.md', '/customers/globex.md']);
    expect((await call('GET', '/api/memory-stores/kb/entries/nope.md')).body).toEqual({ error: 'no memory entry at /nope.md in store kb', code: 'no_entry' });
    expect((await call('PUT', '/api/memory-stores/kb/entries/a%2F%2Fb.md', { content: '' })).body).toEqual({ error: 'path: must not contain empty segments (//)' });

    expect((await call('DELETE', '/api/memory-stores/kb/entries/style.md')).status).toBe(204);
    expect((await call('GET', '/api/memory-stores/kb/entries/style.md')).status).toBe(404);
    const history = await call('GET', '/api/memory-stores/kb/versions?path=/style.md');
    expect(history.body.map((v: any) => v.operation)).toEqual(['deleted', 'created']);
  });

  it('refuses a write based on an old version with 409, so two concurrent writers never lose an update', async () => {
    await call('POST', '/api/memory-stores', { name: 'race' });
    const base = await call('PUT', '/api/memory-stores/race/entries/todo.md', { content: 'one' });
    const writes = await Promise.all(
      ['two', 'three'].map((content) => call('PUT', '/api/memory-stores/race/entries/todo.md', { content, expectedVersion: base.body.version })),
    );
    expect(writes.map((w) => w.status).sort()).toEqual([200, 409]);
    const lost = writes.find((w) => w.status === 409)!;
    expect(lost.body).toMatchObject({ code: 'memory_conflict', currentVersion: 2, error: expect.stringMatching(/changed since version 1 was read: it is at version 2\. Read it again and retry/) });
    expect((await call('PUT', '/api/memory-stores/race/entries/new.md', { content: 'x', expectedVersion: 0 })).status).toBe(201);
    expect((await call('PUT', '/api/memory-stores/race/entries/new.md', { content: 'y', expectedVersion: 0 })).body.code).toBe('memory_exists');
  });

  it('keeps earlier versions and restores one, also of a deleted entry', async () => {
    await call('POST', '/api/memory-stores', { name: 'hist' });
    await call('PUT', '/api/memory-stores/hist/entries/plan.md', { content: 'draft 1' });
    await call('PUT', '/api/memory-stores/hist/entries/plan.md', { content: 'draft 2' });
    await call('PUT', '/api/memory-stores/hist/entries/plan.md', { content: 'draft 3' });
    const versions = (await call('GET', '/api/memory-stores/hist/versions?path=/plan.md')).body;
    expect(versions.map((v: any) => [v.version, v.operation])).toEqual([[3, 'modified'], [2, 'modified'], [1, 'created']]);
    expect(versions[0].actor).toMatch(/^key:/);
    const one = versions.find((v: any) => v.version === 1);
    expect((await call('GET', `/api/memory-stores/hist/versions/${one.id}`)).body).toMatchObject({ content: 'draft 1', path: '/plan.md' });

    const restored = await call('POST', `/api/memory-stores/hist/versions/${one.id}/restore`);
    expect(restored.body).toMatchObject({ content: 'draft 1', version: 4 });
    const after = (await call('GET', '/api/memory-stores/hist/versions?path=/plan.md')).body;
    expect(after[0]).toMatchObject({ version: 4, operation: 'restored', restoredFrom: one.id });

    await call('DELETE', '/api/memory-stores/hist/entries/plan.md');
    const two = after.find((v: any) => v.version === 2);
    expect((await call('POST', `/api/memory-stores/hist/versions/${two.id}/restore`, {})).body).toMatchObject({ path: '/plan.md', content: 'draft 2', version: 6 });
    expect((await call('GET', '/api/memory-stores/hist/entries/plan.md')).body.content).toBe('draft 2');
    const stale = await call('POST', `/api/memory-stores/hist/versions/${one.id}/restore`, { expectedVersion: 5 });
    expect(stale).toMatchObject({ status: 409, body: { currentVersion: 6 } });
  });

  it('caps entries, bytes per entry and total bytes with errors that say what to do', async () => {
    await call('POST', '/api/memory-stores', { name: 'tiny', limits: { maxEntries: 2, maxEntryBytes: 10, maxTotalBytes: 15 } });
    expect((await call('PUT', '/api/memory-stores/tiny/entries/a', { content: '12345678901' })).body).toMatchObject({
      error: 'memory entry /a would be 11 bytes; store tiny allows at most 10 bytes per entry. Keep entries short, or split this one',
      code: 'memory_limit',
    });
    expect((await call('PUT', '/api/memory-stores/tiny/entries/a', { content: '1234567890' })).status).toBe(201);
    const total = await call('PUT', '/api/memory-stores/tiny/entries/b', { content: '123456' });
    expect(total).toMatchObject({ status: 413, body: { error: expect.stringMatching(/^store tiny would hold 16 bytes, over its limit of 15/) } });
    expect((await call('PUT', '/api/memory-stores/tiny/entries/b', { content: '12345' })).status).toBe(201);
    const full = await call('PUT', '/api/memory-stores/tiny/entries/c', { content: '' });
    expect(full).toMatchObject({ status: 413, body: { error: 'store tiny is full: it holds 2 of at most 2 entries. Delete or merge entries before adding /c' } });
  });

  it('renames an entry, keeping its id and history', async () => {
    await call('POST', '/api/memory-stores', { name: 'moves' });
    const made = await call('PUT', '/api/memory-stores/moves/entries/old.md', { content: 'keep me' });
    const moved = await call('POST', '/api/memory-stores/moves/rename', { from: '/old.md', to: '/archive/new.md' });
    expect(moved.body).toMatchObject({ id: made.body.id, path: '/archive/new.md', content: 'keep me', version: 2 });
    expect((await call('GET', '/api/memory-stores/moves/entries/old.md')).status).toBe(404);
    expect((await call('GET', '/api/memory-stores/moves/versions?path=/archive/new.md')).body.map((v: any) => v.operation)).toEqual(['renamed', 'created']);
  });

  it('searches with full-text ranking, the path weighing more than the content', async () => {
    await call('POST', '/api/memory-stores', { name: 'find' });
    await call('PUT', '/api/memory-stores/find/entries/customers/initech.md', { content: 'Initech wants invoices monthly. Contact prefers tea meetings.' });
    await call('PUT', '/api/memory-stores/find/entries/tea.md', { content: 'The office tea supplier changed.' });
    await call('PUT', '/api/memory-stores/find/entries/other.md', { content: 'Nothing to see.' });
    const hits = (await call('GET', '/api/memory-stores/find/search?q=tea')).body;
    expect(hits.map((h: any) => h.path)).toEqual(['/tea.md', '/customers/initech.md']);
    expect(hits[0]).toMatchObject({ store: 'find', version: 1, snippet: expect.stringContaining('«tea»') });
    expect((await call('GET', '/api/memory-stores/find/search?q=invoicing')).body.map((h: any) => h.path)).toEqual(['/customers/initech.md']);
    expect((await call('GET', '/api/memory-stores/find/search?q=')).status).toBe(400);
  });
});

describe('per_user stores', () => {
  it('keeps one memory per end user, named with userId', async () => {
    await call('POST', '/api/memory-stores', { name: 'prefs', scope: 'per_user' });
    expect((await call('PUT', '/api/memory-stores/prefs/entries/me.md', { content: 'x' })).body.error).toBe('userId: memory store prefs is per_user; name the end user whose memory to reach');
    expect((await call('PUT', '/api/memory-stores/prefs/entries/me.md', { content: 'likes tea', userId: 'alice' })).status).toBe(201);
    expect((await call('PUT', '/api/memory-stores/prefs/entries/me.md', { content: 'likes coffee', userId: 'bob' })).status).toBe(201);
    expect((await call('GET', '/api/memory-stores/prefs/entries/me.md?userId=alice')).body.content).toBe('likes tea');
    expect((await call('GET', '/api/memory-stores/prefs/entries/me.md?userId=bob')).body.content).toBe('likes coffee');
    expect((await call('GET', '/api/memory-stores/prefs/entries/me.md?userId=carol')).status).toBe(404);
    expect((await call('GET', '/api/memory-stores/prefs/search?q=tea&userId=bob')).body).toEqual([]);
    expect((await call('GET', '/api/memory-stores/prefs/users')).body.map((u: any) => u.userId).sort()).toEqual(['alice', 'bob']);
    // one user's version is not another's to read or restore
    const aliceVersion = (await call('GET', '/api/memory-stores/prefs/versions?userId=alice')).body[0].id;
    expect((await call('GET', `/api/memory-stores/prefs/versions/${aliceVersion}?userId=bob`)).status).toBe(404);
    expect((await call('GET', '/api/memory-stores/kb/entries?userId=alice')).body.error).toMatch(/is shared; it has no per-user memories/);
  });
});

describe('tenants', () => {
  it("never see another tenant's stores or entries, even under the same name", async () => {
    expect((await call('GET', '/api/memory-stores/kb', undefined, otherKey)).status).toBe(404);
    expect((await call('GET', '/api/memory-stores/kb/entries/customers/acme.md', undefined, otherKey)).status).toBe(404);
    expect((await call('POST', '/api/memory-stores', { name: 'kb' }, otherKey)).status).toBe(201);
    expect((await call('GET', '/api/memory-stores/kb/entries', undefined, otherKey)).body).toEqual([]);
    expect((await call('GET', '/api/memory-stores/kb/search?q=acme', undefined, otherKey)).body).toEqual([]);
  });
});
