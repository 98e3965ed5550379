import { doc } from '../../../shared/route-doc.ts';
import { Hono } from 'hono';
import { readJson } from '../../../shared/http.ts';
import type { IdentityEnv } from '../identity/index.ts';
import { noContent, pageOf, sendList, tenantOf } from '../../crud/index.ts';
import * as v from 'valibot';
import { PoolBody, PoolView } from './pool.schema.ts';
import { PageQuery } from '../list-query.ts';
import { createPool, deletePool, listPools, type PoolDeps } from './pools.service.ts';

/** Pools (variant A): named groups of profiles with a shared filesystem policy; broadcast like profiles. */
export { PoolBody };

export function poolRoutes(deps: PoolDeps): Hono<IdentityEnv> {
  return new Hono<IdentityEnv>()
    .get('/', doc({ summary: 'List pools', description: 'The tenant\'s pools by name: named groups of profiles with a shared filesystem policy. With `limit`, a page and X-Total-Count.', query: PageQuery, response: v.array(PoolView) }), async (c) => {
      const page = pageOf(c);
      return sendList(c, page, await listPools(deps, tenantOf(c), page));
    })
    .post('/', doc({ summary: 'Create a pool', description: 'A named group of profiles (`members`, each a lead or a member) and the paths they may read and write; sent to every runner. 409 when the name is taken.', body: PoolBody, response: PoolView, status: 201, errors: [409] }), async (c) => c.json(await createPool(deps, tenantOf(c), await readJson(c, PoolBody)), 201))
    .delete('/:name', doc({ summary: 'Delete a pool', description: 'Removes the pool from the tenant and from every runner; its profiles stay.', status: 204 }), async (c) => {
      await deletePool(deps, tenantOf(c), c.req.param('name'));
      return noContent(c);
    });
}

