import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { useJsonErrors } from '../../../shared/http.ts';
import type { Principal } from './auth.ts';
import { createGuards, requireRole } from './guards.ts';
import type { IdentityEnv } from './middleware.ts';
import type { Role } from './roles.ts';

/** A tiny app acting as the given principal, with the guards in front of a route that answers `ok`. */
function appAs(principal: Partial<Principal>, mount: (app: Hono<IdentityEnv>) => void) {
  const app = new Hono<IdentityEnv>();
  useJsonErrors(app);
  app.use('*', async (c, next) => {
    c.set('principal', { tenantId: 'acme', tenantName: null, role: 'owner', authKind: 'api_key', keyId: null, subject: null, ...principal });
    await next();
  });
  mount(app);
  return app;
}

const call = async (app: Hono<IdentityEnv>, method: string, path = '/x') => {
  const res = await app.request(path, { method });
  return { status: res.status, body: await res.json() };
};

describe('requireRole', () => {
  const guarded = (role: Role, opts?: { writesOnly?: boolean }) =>
    appAs({ role }, (app) => app.all('/x', requireRole('admin', 'setting the spend cap', opts), (c) => c.json({ ok: true })));

  it('lets admins and owners through and refuses members and viewers with a 403 naming what they need', async () => {
    expect(await call(guarded('owner'), 'PUT')).toEqual({ status: 200, body: { ok: true } });
    expect(await call(guarded('admin'), 'PUT')).toEqual({ status: 200, body: { ok: true } });
    expect(await call(guarded('member'), 'PUT')).toEqual({ status: 403, body: { error: 'setting the spend cap needs role admin or owner' } });
    expect(await call(guarded('viewer'), 'GET')).toEqual({ status: 403, body: { error: 'setting the spend cap needs role admin or owner' } });
  });

  it('with writesOnly, lets every role read and guards only the changes', async () => {
    expect((await call(guarded('member', { writesOnly: true }), 'GET')).status).toBe(200);
    expect((await call(guarded('member', { writesOnly: true }), 'DELETE')).status).toBe(403);
  });

  it('says "or higher" for roles below admin', async () => {
    const app = appAs({ role: 'viewer' }, (a) => a.get('/x', requireRole('member', 'the wallet'), (c) => c.json({ ok: true })));
    expect(await call(app, 'GET')).toEqual({ status: 403, body: { error: 'the wallet needs role member or higher' } });
  });
});

describe('operatorOnly', () => {
  const guarded = (tenantId: string, adminTenant: string | undefined) =>
    appAs({ tenantId }, (app) => app.get('/x', createGuards(adminTenant).operatorOnly(), (c) => c.json({ ok: true })));

  it('serves the operator tenant and answers 404 to every other tenant, as if the route did not exist', async () => {
    expect(await call(guarded('ops', 'ops'), 'GET')).toEqual({ status: 200, body: { ok: true } });
    expect(await call(guarded('acme', 'ops'), 'GET')).toEqual({ status: 404, body: { error: 'not found' } });
  });

  it('answers 404 to everyone when no operator tenant is configured', async () => {
    expect((await call(guarded('default', undefined), 'GET')).status).toBe(404);
  });
});

describe('readOnlyViewers', () => {
  it('refuses a viewer any method but reads', async () => {
    const app = appAs({ role: 'viewer' }, (a) => a.use('*', createGuards(undefined).readOnlyViewers()).all('/x', (c) => c.json({ ok: true })));
    expect((await call(app, 'GET')).status).toBe(200);
    expect(await call(app, 'POST')).toEqual({ status: 403, body: { error: 'role viewer may only read' } });
  });
});
