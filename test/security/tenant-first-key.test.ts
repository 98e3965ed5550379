import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestSvc } from '../support/svc.ts';
import { keyOf, startOperatorSvc } from '../support/tenants.ts';

/**
 * Issue 12, item 11: the operator gives a tenant it created its first key with `POST /api/tenants/{id}/keys`: a
 * one-time owner key of that tenant. Everyone else gets the 404 of the other tenant routes; unknown and deleted
 * tenants are 404 too.
 */
describe('first key of a new tenant', () => {
  let svc: TestSvc;

  beforeAll(async () => {
    svc = await startOperatorSvc({}, 'conductor');
    expect((await svc.api('/api/tenants', { method: 'POST', json: { id: 'acme', name: 'Acme' } })).status).toBe(201);
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('mints a one-time owner key of the tenant for the operator, and the key works as that tenant at once', async () => {
    const res = await svc.api('/api/tenants/acme/keys', { method: 'POST', json: { name: 'acme first key' } });
    expect(res.status).toBe(201);
    const key = await res.json();
    expect(key).toMatchObject({ tenantId: 'acme', name: 'acme first key', role: 'owner', status: 'active', expiresAt: null, token: expect.stringMatching(/^ao_test_[A-Za-z0-9]{32}$/) });
    const who = await svc.api('/api/whoami', { key: key.token });
    expect(await who.json()).toMatchObject({ tenantId: 'acme', role: 'owner', keyId: key.id });
    const listed = await (await svc.api('/api/api-keys', { key: key.token })).json();
    expect(listed.map((k: { id: string }) => k.id)).toEqual([key.id]);
    expect(JSON.stringify(listed)).not.toContain(key.token);
    // the operator's own tenant did not get the key
    expect((await (await svc.api('/api/api-keys')).json()).map((k: { id: string }) => k.id)).not.toContain(key.id);
  });

  it('validates the body like POST /api/api-keys', async () => {
    const res = await svc.api('/api/tenants/acme/keys', { method: 'POST', json: { name: 'x', expiresAt: '2001-01-01T00:00:00Z' } });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: 'expiresAt: must be in the future' });
  });

  it('answers 404 for an unknown or deleted tenant', async () => {
    expect((await svc.api('/api/tenants', { method: 'POST', json: { id: 'gone', name: 'Gone' } })).status).toBe(201);
    expect((await svc.api('/api/tenants/gone', { method: 'DELETE' })).status).toBe(204);
    for (const id of ['nobody', 'gone']) {
      const res = await svc.api(`/api/tenants/${id}/keys`, { method: 'POST', json: { name: 'k' } });
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ error: 'unknown tenant' });
    }
  });

  it('answers 404 to every caller outside the operator tenant, like the other tenant routes', async () => {
    const acmeOwner = await keyOf(svc, 'acme', 'owner');
    const res = await svc.api('/api/tenants/acme/keys', { method: 'POST', key: acmeOwner, json: { name: 'k' } });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: 'not found' });
    // inside the operator tenant, minting keys for tenants needs role admin, like every other tenant change
    const member = await keyOf(svc, 'default', 'member');
    expect((await svc.api('/api/tenants/acme/keys', { method: 'POST', key: member, json: { name: 'k' } })).status).toBe(403);
  });
});
