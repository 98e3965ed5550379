import { doc } from '../../../shared/route-doc.ts';
import { Hono } from 'hono';
import * as v from 'valibot';
import { JsonObject, readJson } from '../../../shared/http.ts';
import { readOnlyFields } from '../../../shared/strict-body.ts';
import { IssueKeyBody, type KeyDeps } from './keys.service.ts';
import { IssuedKeySchema, TenantSchema } from '../../../contracts/api-resources.ts';
import type { IdentityEnv } from './middleware.ts';
import type { Guards } from './guards.ts';
import { createTenant, getTenant, issueOwnerKey, listTenants, softDeleteTenant, updateTenant } from './tenants.service.ts';

const Slug = v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'a slug of lowercase letters, digits and hyphens'));
const Metadata = JsonObject;
const CreateBody = v.object({ id: Slug, name: v.pipe(v.string(), v.minLength(1)), metadata: v.optional(Metadata) });
const TenantList = v.object({ total: v.number(), tenants: v.array(TenantSchema) });
const OPERATOR = ' Operator only: callers outside the operator tenant (AGENT_ORC_ADMIN_TENANT) get 404; changes need the admin role.';
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
    .get('/', doc({ summary: 'List tenants', description: 'Every tenant, deleted ones too with `includeDeleted=true`.' + OPERATOR, query: v.object({ includeDeleted: v.optional(v.picklist(['true', 'false', '1', '0'])) }), response: TenantList, errors: [404] }), async (c) => c.json(await listTenants(db, ['1', 'true'].includes(c.req.query('includeDeleted') ?? ''))))
    .post('/', doc({ summary: 'Create a tenant', description: 'Creates a tenant with its slug id and name; 409 when the id is taken. Give it a first key with `POST /api/tenants/{id}/keys`.' + OPERATOR, body: CreateBody, response: TenantSchema, status: 201, errors: [404, 409] }), async (c) => c.json(await createTenant(db, await readJson(c, CreateBody)), 201))
    .get('/:id', doc({ summary: 'Get a tenant', description: 'The tenant, with its metadata.' + OPERATOR, response: TenantSchema }), async (c) => c.json(await getTenant(db, c.req.param('id'))))
    .put('/:id', doc({ summary: 'Update a tenant', description: 'Changes the tenant’s name or metadata (the read-only fields of a GET are accepted back and ignored).' + OPERATOR, body: UpdateBody, response: TenantSchema }), async (c) => {
      const tenant = await updateTenant(db, c.req.param('id'), await readJson(c, UpdateBody));
      keyDeps.keyCache?.clear(); // a principal carries its tenant's name
      return c.json(tenant);
    })
    .post('/:id/keys', doc({ summary: 'Create a tenant’s owner key', description: 'Issues an owner key for the tenant, typically its first. The answer carries the key (`token`) once.' + OPERATOR, body: IssueKeyBody, response: IssuedKeySchema, status: 201 }), async (c) => {
      const body = await readJson(c, IssueKeyBody);
      return c.json(await issueOwnerKey(keyDeps, c.get('principal'), c.req.param('id'), body), 201);
    })
    .delete('/:id', doc({ summary: 'Delete a tenant', description: 'Deletes the tenant softly: its keys stop working at once. The default tenant cannot be deleted (400).' + OPERATOR, status: 204, errors: [400] }), async (c) => {
      await softDeleteTenant(db, c.req.param('id'));
      keyDeps.keyCache?.clear();
      return c.body(null, 204);
    });
}
