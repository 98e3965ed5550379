import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeIdp, type FakeIdp } from '../support/fake-idp.ts';
import type { TestSvc } from '../support/svc.ts';
import { startOperatorSvc } from '../support/tenants.ts';

/**
 * Issue 12, item 8: a signed-in (JWT) user lists API keys by the seed's role rules. Admins and owners see every key of
 * the tenant; members and viewers see the keys they minted themselves (the token's subject); nobody gets a 400.
 */
describe('API key listing for signed-in (JWT) users', () => {
  let svc: TestSvc;
  let idp: FakeIdp;
  const session = (role: string, sub: string) => idp.sign({ tenant_id: 'default', role, sub });
  const listIds = async (token: string) => {
    const res = await svc.api('/api/api-keys', { key: token });
    expect(res.status).toBe(200);
    return ((await res.json()) as Array<{ id: string }>).map((k) => k.id).sort();
  };

  beforeAll(async () => {
    idp = await startFakeIdp();
    svc = await startOperatorSvc({ SVC_JWT_ISSUER: idp.issuer, SVC_JWT_JWKS_URL: idp.jwksUrl }, 'conductor');
  });
  afterAll(async () => {
    await svc?.stop();
    await idp?.close();
  });

  it('lets a signed-in viewer list keys and shows it none of the keys others minted', async () => {
    expect(await listIds(await session('viewer', 'user-viewer'))).toEqual([]);
  });

  it('lets a signed-in member list exactly the keys it minted', async () => {
    const member = await session('member', 'user-member');
    const minted = await svc.api('/api/api-keys', { method: 'POST', key: member, json: { name: 'laptop' } });
    expect(minted.status).toBe(201);
    const key = await minted.json();
    expect(key.createdBy).toBe('user-member');
    expect(await listIds(member)).toEqual([key.id]);
    expect(await listIds(await session('member', 'user-other'))).toEqual([]);
  });

  it('lets a signed-in admin list every key of the tenant', async () => {
    const all = await listIds(svc.key);
    expect(all.length).toBeGreaterThan(1);
    expect(await listIds(await session('admin', 'user-admin'))).toEqual(all);
  });
});
