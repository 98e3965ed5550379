import { doc } from '../../../shared/route-doc.ts';
import { Hono } from 'hono';
import { readJson } from '../../../shared/http.ts';
import type { IdentityEnv } from '../identity/index.ts';
import { noContent, pageOf, sendList, tenantOf } from '../../crud/index.ts';
import { PoolBody } from './pool.schema.ts';
import { createPool, deletePool, listPools, type PoolDeps } from './pools.service.ts';

/** Pools (variant A): named groups of profiles with a shared filesystem policy; broadcast like profiles. */
export { PoolBody };

export function poolRoutes(deps: PoolDeps): Hono<IdentityEnv> {
  return new Hono<IdentityEnv>()
    .get('/', async (c) => {
      const page = pageOf(c);
      return sendList(c, page, await listPools(deps, tenantOf(c), page));
    })
    .post('/', doc({ body: PoolBody }), async (c) => c.json(await createPool(deps, tenantOf(c), await readJson(c, PoolBody)), 201))
    .delete('/:name', async (c) => {
      await deletePool(deps, tenantOf(c), c.req.param('name'));
      return noContent(c);
    });
}

