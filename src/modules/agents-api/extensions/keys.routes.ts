import { doc } from '../../../shared/route-doc.ts';
import { Hono } from 'hono';
import * as v from 'valibot';
import type { ApiKeyView, KeysService } from '../../conductor/index.ts';
import { readJson } from '../../../shared/http.ts';
import type { AgentsEnv } from '../context.ts';

const CreateBody = v.object({
  name: v.optional(v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(200))),
  label: v.optional(v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(200))),
  expiresAt: v.optional(v.nullable(v.pipe(v.string(), v.isoTimestamp()))),
});

/**
 * `/api/keys` on the identity key service: list (admins see all keys of the organisation, others their own), create
 * (the key inherits the caller's role; its `secret` is in this one response only), revoke.
 */
export function keysRoutes(keys: KeysService): Hono<AgentsEnv> {
  return new Hono<AgentsEnv>()
    .get('/keys', async (c) => c.json({ keys: (await keys.list(c.get('principal'))).map(view) }))
    .post('/keys', doc({ body: CreateBody }), async (c) => {
      const body = await readJson(c, CreateBody);
      const key = await keys.issue(c.get('principal'), { name: body.name ?? body.label ?? 'api key', expiresAt: body.expiresAt });
      return c.json({ ...view(key), secret: key.token }, 201);
    })
    .delete('/keys/:key_id', async (c) => {
      await keys.revoke(c.get('principal'), c.req.param('key_id'));
      return c.body(null, 204);
    });
}

function view(k: ApiKeyView) {
  return { id: k.id, name: k.name, role: k.role, prefix: k.prefix, status: k.status, createdBy: k.createdBy, createdAt: k.createdAt, expiresAt: k.expiresAt, revokedAt: k.revokedAt };
}
