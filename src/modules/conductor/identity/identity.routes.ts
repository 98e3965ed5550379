import { doc, type Documents } from '../../../shared/route-doc.ts';
import { Hono } from 'hono';
import { readJson } from '../../../shared/http.ts';
import type { IdentityEnv } from './middleware.ts';
import * as v from 'valibot';
import type { ApiKeyView } from './keys.service.ts';
import { IssueKeyBody, issueKey, listKeys, revokeKey, type KeyDeps } from './keys.service.ts';
import { ApiKeySchema, IssuedKeySchema } from '../../../contracts/api-resources.ts';

const WhoAmI = v.object({
  tenantId: v.string(),
  tenantName: v.string(),
  role: v.picklist(['owner', 'admin', 'member', 'viewer']),
  authKind: v.pipe(v.string(), v.description('api_key, run_token or jwt')),
  keyId: v.optional(v.nullable(v.string())),
  subject: v.optional(v.nullable(v.string())),
});

/** `/api/whoami` and `/api/api-keys`. */
export function identityRoutes(deps: KeyDeps): Hono<IdentityEnv> {
  return new Hono<IdentityEnv>()
    .get('/whoami', doc({ summary: 'Show who is calling', description: 'The tenant, role and kind of credential of the caller: the way to check a key.', response: WhoAmI }), async (c) => {
      const p = c.get('principal');
      return c.json({ tenantId: p.tenantId, tenantName: p.tenantName, role: p.role, authKind: p.authKind, keyId: p.keyId, subject: p.subject });
    })
    .get('/api-keys', doc({ summary: 'List API keys', description: 'The tenant’s API keys without their secrets. Admins and owners see every key; members see the keys they created.', response: v.array(ApiKeySchema) }), async (c) => c.json(await listKeys(deps, c.get('principal'))))
    .post(
      '/api-keys',
      doc({
        summary: 'Create an API key',
        description: 'Issues a key for the caller’s tenant with the caller’s role, optionally expiring. The answer carries the key (`token`) once; store it, it cannot be shown again. Viewers may not create keys.',
        body: IssueKeyBody,
        response: IssuedKeySchema,
        status: 201,
      }), async (c) => {
      const body = await readJson(c, IssueKeyBody);
      return c.json(await issueKey(deps, c.get('principal'), body), 201);
    })
    .delete('/api-keys/:id', doc({ summary: 'Revoke an API key', description: 'Revokes the key at once. Members may revoke only the keys they created; admins and owners any key of the tenant.', status: 204 }), async (c) => {
      await revokeKey(deps, c.get('principal'), c.req.param('id'));
      return c.body(null, 204);
    });
}

/** The answers' types fit what the reference documents (compile-time only). */
export type DocumentedApiKey = Documents<typeof ApiKeySchema, ApiKeyView>;
