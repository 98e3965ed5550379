import { doc } from '../../../shared/route-doc.ts';
import { Hono } from 'hono';
import { readJson } from '../../../shared/http.ts';
import type { IdentityEnv } from './middleware.ts';
import { IssueKeyBody, issueKey, listKeys, revokeKey, type KeyDeps } from './keys.service.ts';

/** `/api/whoami` and `/api/api-keys`. */
export function identityRoutes(deps: KeyDeps): Hono<IdentityEnv> {
  return new Hono<IdentityEnv>()
    .get('/whoami', async (c) => {
      const p = c.get('principal');
      return c.json({ tenantId: p.tenantId, tenantName: p.tenantName, role: p.role, authKind: p.authKind, keyId: p.keyId, subject: p.subject });
    })
    .get('/api-keys', async (c) => c.json(await listKeys(deps, c.get('principal'))))
    .post('/api-keys', doc({ body: IssueKeyBody }), async (c) => {
      const body = await readJson(c, IssueKeyBody);
      return c.json(await issueKey(deps, c.get('principal'), body), 201);
    })
    .delete('/api-keys/:id', async (c) => {
      await revokeKey(deps, c.get('principal'), c.req.param('id'));
      return c.body(null, 204);
    });
}
