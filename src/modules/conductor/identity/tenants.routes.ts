import { doc } from '../../../shared/route-doc.ts';
import { Hono } from 'hono';
import * as v from 'valibot';
import { JsonObject, readJson } from '../../../shared/http.ts';
import { readOnlyFields } from '../../../shared/strict-body.ts';
import { IssueKeyBody, type KeyDeps } from './keys.service.ts';
import type { IdentityEnv } from './middleware.ts';
import type { Guards } from './guards.ts';
import { createTenant, getTenant, issueOwnerKey, listTenants, softDeleteTenant, updateTenant } from './tenants.service.ts';

const Slug = v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'a slug of lowercase letters, digits and hyphens'));
const Metadata = JsonObject;
const CreateBody = v.object({ id: Slug, name: v.pipe(v.string(), v.minLength(1)), metadata: v.optional(Metadata) });
const UpdateBody = v.object({ ...readOnlyFields('id', 'createdAt', 'updatedAt', 'deletedAt'), name: v.optional(v.pipe(v.string(), v.minLength(1))), metadata: v.optional(Metadata) });

/**
 * Operator-only tenant management, including a new tenant's first key (`POST /{id}/keys`: a one-time owner key).
 * Callers outside the operator tenant get 404: the routes are not enumerable.
 */
export function tenantRoutes(keyDeps: KeyDeps, guards: Guards): Hono<IdentityEnv> {
  const { db } = keyDeps;
  return new Hono<IdentityEnv>()
    .use('*', guards.operatorOnly())
    .use('*', guards.requireRole('admin', 'tenant management', { writesOnly: true }))
    .get('/', async (c) => c.json(await listTenants(db, ['1', 'true'].includes(c.req.query('includeDeleted') ?? ''))))
    .post('/', doc({ body: CreateBody }), async (c) => c.json(await createTenant(db, await readJson(c, CreateBody)), 201))
    .get('/:id', async (c) => c.json(await getTenant(db, c.req.param('id'))))
    .put('/:id', doc({ body: UpdateBody }), async (c) => {
      const tenant = await updateTenant(db, c.req.param('id'), await readJson(c, UpdateBody));
      keyDeps.keyCache?.clear(); // a principal carries its tenant's name
      return c.json(tenant);
    })
    .post('/:id/keys', doc({ body: IssueKeyBody }), async (c) => {
      const body = await readJson(c, IssueKeyBody);
      return c.json(await issueOwnerKey(keyDeps, c.get('principal'), c.req.param('id'), body), 201);
    })
    .delete('/:id', async (c) => {
      await softDeleteTenant(db, c.req.param('id'));
      keyDeps.keyCache?.clear();
      return c.body(null, 204);
    });
}
