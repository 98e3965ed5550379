import { doc } from '../../../shared/route-doc.ts';
import { Hono } from 'hono';
import type { Kysely } from 'kysely';
import * as v from 'valibot';
import type { DB } from '../../../db/index.ts';
import type { PoolSpec } from '../../../contracts/runner.client.ts';
import { conflict } from '../../../shared/errors.ts';
import { prefixedId } from '../../../shared/ids.ts';
import { readJson } from '../../../shared/http.ts';
import type { IdentityEnv } from '../identity/index.ts';
import { found, inTenant, noContent, pageOf, sendList, tenantOf } from '../../crud/index.ts';
import { NAME_PATTERN } from '../profiles/profile.schema.ts';
import { deleteSpec, insertSpec, listSpecs, type Spec } from '../profiles/profiles.repo.ts';
import type { Broadcaster } from '../runners/broadcast.ts';

/** Pools (variant A): named groups of profiles with a shared filesystem policy; broadcast like profiles. */
const Patterns = v.array(v.pipe(v.string(), v.minLength(1, 'non-empty patterns')));
export const PoolBody = v.object({
  name: v.pipe(v.string(), v.regex(NAME_PATTERN, 'a name of 1-128 letters, digits, dot, underscore or hyphen')),
  description: v.optional(v.string()),
  members: v.optional(
    v.array(v.object({ profile: v.pipe(v.string(), v.minLength(1, 'a profile name')), role: v.optional(v.picklist(['lead', 'member'], 'one of lead, member'), 'member') })),
    [],
  ),
  fs: v.optional(v.object({ read: v.optional(Patterns), write: v.optional(Patterns) })),
});

export function poolRoutes(deps: { db: Kysely<DB>; broadcaster: Broadcaster }): Hono<IdentityEnv> {
  return new Hono<IdentityEnv>()
    .get('/', async (c) => {
      const page = pageOf(c);
      return sendList(c, page, await inTenant(deps.db, c, (tx) => listSpecs(tx, 'pools', page)));
    })
    .post('/', doc({ body: PoolBody }), async (c) => {
      const tenantId = tenantOf(c);
      const body = await readJson(c, PoolBody);
      const spec: Spec = { ...body, id: prefixedId('pool') };
      const created = await inTenant(deps.db, c, (tx) => insertSpec(tx, 'pools', tenantId, spec));
      if (!created) throw conflict(`pool ${body.name} already exists`);
      await deps.broadcaster.send((r) => r.putPool(tenantId, spec as PoolSpec));
      return c.json(spec, 201);
    })
    .delete('/:name', async (c) => {
      const name = c.req.param('name');
      found(await inTenant(deps.db, c, (tx) => deleteSpec(tx, 'pools', name)), `unknown pool: ${name}`);
      await deps.broadcaster.send((r) => r.deletePool(tenantOf(c), name));
      return noContent(c);
    });
}
