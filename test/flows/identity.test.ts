import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { backends } from '../support/backends.ts';
import { startTestSvc, type TestSvc } from '../support/svc.ts';
import { insertKey, type Role } from '../../src/modules/conductor/identity/index.ts';

const PEPPER = 'test-pepper-0123456789abcdef';

/** Keys of other roles and tenants are minted through the identity module itself (no API demotes a role). */
async function mintKey(svc: TestSvc, tenantId: string, role: Role): Promise<string> {
  const db = svc.server.built.database!.db;
  const key = await insertKey({ db, pepper: PEPPER, keyEnv: 'test' }, tenantId, { name: role, role, createdBy: null, expiresAt: null });
  return key.token;
}

describe.each(backends)('identity on $name', (backend) => {
  let svc: TestSvc;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    const db = await backend.setup();
    cleanup = db.cleanup;
    svc = await startTestSvc({ DATABASE_URL: db.url, AGENT_ORC_ADMIN_TENANT: 'default', AGENT_API_KEY_PEPPER: PEPPER });
  });
  afterAll(async () => {
    await svc?.stop();
    await cleanup?.();
  });

  it('answers whoami for the bootstrap key as the owner of tenant default', async () => {
    const res = await svc.api('/api/whoami');
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ tenantId: 'default', tenantName: 'Default', role: 'owner', authKind: 'api_key' });
    expect(res.headers.get('x-request-id')).toBeTruthy();
  });

  it('rejects a missing or unknown key with 401 JSON', async () => {
    const missing = await svc.api('/api/whoami', { key: null });
    expect(missing.status).toBe(401);
    expect(await missing.json()).toEqual({ error: 'missing bearer credential' });
    const unknown = await svc.api('/api/whoami', { key: 'ao_test_unknownunknownunknown000' });
    expect(unknown.status).toBe(401);
    expect((await unknown.json()).error).toMatch(/invalid API key/);
  });

  it('shows a new key once, stores only its hash, and the key works at once', async () => {
    const res = await svc.api('/api/api-keys', { method: 'POST', json: { name: 'ci' } });
    expect(res.status).toBe(201);
    const key = await res.json();
    expect(key.token).toMatch(/^ao_test_[A-Za-z0-9]{32}$/);
    expect(key).toMatchObject({ name: 'ci', role: 'owner', tenantId: 'default', status: 'active' });
    const listed = await (await svc.api('/api/api-keys')).json();
    const row = listed.find((k: { id: string }) => k.id === key.id);
    expect(row).toBeDefined();
    expect(JSON.stringify(listed)).not.toContain(key.token);
    const who = await (await svc.api('/api/whoami', { key: key.token })).json();
    expect(who.keyId).toBe(key.id);
  });

  it('refuses a revoked key on its very next request', async () => {
    const key = await (await svc.api('/api/api-keys', { method: 'POST', json: { name: 'to-revoke' } })).json();
    expect((await svc.api('/api/whoami', { key: key.token })).status).toBe(200);
    expect((await svc.api(`/api/api-keys/${key.id}`, { method: 'DELETE' })).status).toBe(204);
    const after = await svc.api('/api/whoami', { key: key.token });
    expect(after.status).toBe(401);
    expect(await after.json()).toEqual({ error: 'API key revoked' });
    const listed = await (await svc.api('/api/api-keys')).json();
    expect(listed.find((k: { id: string }) => k.id === key.id).status).toBe('revoked');
  });

  it('refuses a key once its expiry has passed', async () => {
    const expiresAt = new Date(Date.now() + 60 * 60 * 1000).toISOString();
    const key = await (await svc.api('/api/api-keys', { method: 'POST', json: { name: 'short', expiresAt } })).json();
    expect(key.expiresAt).toBe(expiresAt);
    expect((await svc.api('/api/whoami', { key: key.token })).status).toBe(200);
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 2 * 60 * 60 * 1000);
      const res = await svc.api('/api/whoami', { key: key.token });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: 'API key expired' });
    } finally {
      vi.useRealTimers();
    }
  });

  it('refuses an expiry in the past with 400 naming the field', async () => {
    const res = await svc.api('/api/api-keys', { method: 'POST', json: { name: 'x', expiresAt: '2001-01-01T00:00:00Z' } });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(/^expiresAt: /);
  });

  it('ignores X-Tenant-ID from the client: the tenant comes from the key', async () => {
    const res = await svc.api('/api/whoami', { headers: { 'X-Tenant-ID': 'other' } });
    expect((await res.json()).tenantId).toBe('default');
  });

  it('lets members see and revoke only their own keys, and viewers only read', async () => {
    const member = await mintKey(svc, 'default', 'member');
    const viewer = await mintKey(svc, 'default', 'viewer');
    const owners = await (await svc.api('/api/api-keys', { method: 'POST', json: { name: 'owner-made' } })).json();
    const child = await svc.api('/api/api-keys', { method: 'POST', key: member, json: { name: 'member-made' } });
    expect(child.status).toBe(201);
    expect((await child.json()).role).toBe('member');
    const seen = await (await svc.api('/api/api-keys', { key: member })).json();
    expect(seen.map((k: { name: string }) => k.name).sort()).toEqual(['member', 'member-made']);
    const denied = await svc.api(`/api/api-keys/${owners.id}`, { method: 'DELETE', key: member });
    expect(denied.status).toBe(403);
    expect((await svc.api('/api/whoami', { key: owners.token })).status).toBe(200);
    expect((await svc.api('/api/whoami', { key: viewer })).status).toBe(200);
    const viewerWrite = await svc.api('/api/api-keys', { method: 'POST', key: viewer, json: { name: 'nope' } });
    expect(viewerWrite.status).toBe(403);
    expect(await viewerWrite.json()).toEqual({ error: 'role viewer may only read' });
  });

  it('keeps each tenant to its own keys over the API', async () => {
    const created = await svc.api('/api/tenants', { method: 'POST', json: { id: `team-${backend.name}`, name: 'Team' } });
    expect(created.status).toBe(201);
    const teamKey = await mintKey(svc, `team-${backend.name}`, 'owner');
    const who = await (await svc.api('/api/whoami', { key: teamKey })).json();
    expect(who).toMatchObject({ tenantId: `team-${backend.name}`, tenantName: 'Team', role: 'owner' });
    const defaults = await (await svc.api('/api/api-keys')).json();
    const teamSees = await (await svc.api('/api/api-keys', { key: teamKey })).json();
    expect(teamSees.map((k: { tenantId: string }) => k.tenantId)).toEqual([`team-${backend.name}`]);
    expect((await svc.api(`/api/api-keys/${defaults[0].id}`, { method: 'DELETE', key: teamKey })).status).toBe(404);
    // Tenant routes are operator-only and not enumerable for anyone else.
    expect((await svc.api('/api/tenants', { key: teamKey })).status).toBe(404);
  });

  it('stops accepting the keys of a soft-deleted tenant', async () => {
    const id = `gone-keys-${backend.name}`;
    expect((await svc.api('/api/tenants', { method: 'POST', json: { id, name: 'Gone' } })).status).toBe(201);
    const key = await mintKey(svc, id, 'owner');
    expect((await svc.api('/api/whoami', { key })).status).toBe(200);
    expect((await svc.api(`/api/tenants/${id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await svc.api('/api/whoami', { key })).status).toBe(401);
  });

  it('hides tenant routes from callers outside the operator tenant and keeps default undeletable', async () => {
    expect((await svc.api('/api/tenants/default', { method: 'DELETE' })).status).toBe(400);
    const created = await svc.api('/api/tenants', { method: 'POST', json: { id: `gone-${backend.name}`, name: 'Gone', metadata: { plan: 'x' } } });
    expect(created.status).toBe(201);
    expect((await svc.api(`/api/tenants/gone-${backend.name}`, { method: 'DELETE' })).status).toBe(204);
    const list = await (await svc.api('/api/tenants')).json();
    expect(list.tenants.map((t: { id: string }) => t.id)).not.toContain(`gone-${backend.name}`);
    const all = await (await svc.api('/api/tenants?includeDeleted=1')).json();
    expect(all.tenants.find((t: { id: string }) => t.id === `gone-${backend.name}`).deletedAt).toBeTruthy();
    expect(all.total).toBe(all.tenants.length);
    expect((await svc.api('/api/tenants', { method: 'POST', json: { id: 'Not A Slug', name: 'x' } })).status).toBe(400);
  });
});
