import { doc } from '../../../shared/route-doc.ts';
import { Hono } from 'hono';
import * as v from 'valibot';
import type { ApiKeyView, KeysService } from '../../conductor/index.ts';
import { readJson } from '../../../shared/http.ts';
import type { AgentsEnv } from '../context.ts';
import { READ_ERRORS, WRITE_ERRORS } from '../wire.schema.ts';
import { ApiKeyList, CreatedApiKey } from './extensions.schema.ts';

const CreateBody = v.object({
  name: v.optional(v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(200))),
  label: v.optional(v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(200))),
  expiresAt: v.optional(v.nullable(v.pipe(v.string(), v.isoTimestamp()))),
});

const DOCS = {
  list: doc({ summary: 'List API keys', description: 'The API keys of the organisation (admins and owners see all, others their own), without their secrets.', response: ApiKeyList, errors: READ_ERRORS }),
  create: doc({
    summary: 'Create an API key',
    description: "Issues a key with the caller's role, named by `name` (or `label`), optionally expiring at `expiresAt`. Its `secret` is in this answer only: store it.",
    body: CreateBody,
    response: CreatedApiKey,
    status: 201,
    errors: WRITE_ERRORS,
  }),
  revoke: doc({ summary: 'Revoke an API key', description: 'Revokes the key at once (admins any key of the organisation, others their own).', status: 204, errors: WRITE_ERRORS }),
};

/**
 * `/api/keys` on the identity key service: list (admins see all keys of the organisation, others their own), create
 * (the key inherits the caller's role; its `secret` is in this one response only), revoke.
 */
export function keysRoutes(keys: KeysService): Hono<AgentsEnv> {
  return new Hono<AgentsEnv>()
    .get('/keys', DOCS.list, async (c) => c.json({ keys: (await keys.list(c.get('principal'))).map(view) }))
    .post('/keys', DOCS.create, async (c) => {
      const body = await readJson(c, CreateBody);
      const key = await keys.issue(c.get('principal'), { name: body.name ?? body.label ?? 'api key', expiresAt: body.expiresAt });
      return c.json({ ...view(key), secret: key.token }, 201);
    })
    .delete('/keys/:key_id', DOCS.revoke, async (c) => {
      await keys.revoke(c.get('principal'), c.req.param('key_id'));
      return c.body(null, 204);
    });
}

function view(k: ApiKeyView) {
  return { id: k.id, name: k.name, role: k.role, prefix: k.prefix, status: k.status, createdBy: k.createdBy, createdAt: k.createdAt, expiresAt: k.expiresAt, revokedAt: k.revokedAt };
}
