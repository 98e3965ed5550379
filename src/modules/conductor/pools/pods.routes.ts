import { doc } from '../../../shared/route-doc.ts';
import { Hono } from 'hono';
import * as v from 'valibot';
import { readJson } from '../../../shared/http.ts';
import type { IdentityEnv } from '../identity/index.ts';
import { noContent, pageOf, sendList, tenantOf } from '../../crud/index.ts';
import { Member, PodPatch, PoolBody } from './pool.schema.ts';
import { assertUnchanged } from '../../../shared/strict-body.ts';
import { addMember, createPool, deletePool, getPool, listPools, patchPool, pinPool, removeMember, type PoolDeps } from './pools.service.ts';

/**
 * `/api/pods` (variant B's name for pools, over the same rows): list (limit 200 by default, X-Total-Count always,
 * pinned first), get, create, update of the supplied fields, pin and unpin, add and remove a member, delete.
 */
const AddMember = v.object({ profile: Member.entries.profile, role: Member.entries.role });

export function podRoutes(deps: PoolDeps): Hono<IdentityEnv> {
  return new Hono<IdentityEnv>()
    .get('/', async (c) => {
      const page = pageOf(c, { defaultLimit: 200 });
      return sendList(c, page, await listPools(deps, tenantOf(c), page, { pinned: true }));
    })
    .post('/', doc({ body: PoolBody }), async (c) => c.json({ ...(await createPool(deps, tenantOf(c), await readJson(c, PoolBody), 'pod')), pinned: false }, 201))
    .get('/:name', async (c) => c.json(await getPool(deps, tenantOf(c), c.req.param('name'))))
    .patch('/:name', doc({ body: PodPatch }), async (c) => {
      const { name, ...patch } = await readJson(c, PodPatch);
      assertUnchanged('name', name, c.req.param('name'), 'a pod is not renamed (create one under the new name)');
      return c.json(await patchPool(deps, tenantOf(c), c.req.param('name'), patch));
    })
    .delete('/:name', async (c) => {
      await deletePool(deps, tenantOf(c), c.req.param('name'), 'pod');
      return noContent(c);
    })
    .post('/:name/pin', async (c) => c.json(await pinPool(deps, tenantOf(c), c.req.param('name'), true)))
    .delete('/:name/pin', async (c) => c.json(await pinPool(deps, tenantOf(c), c.req.param('name'), false)))
    .post('/:name/members', doc({ body: AddMember }), async (c) => c.json(await addMember(deps, tenantOf(c), c.req.param('name'), await readJson(c, AddMember))))
    .delete('/:name/members/:profile', async (c) => c.json(await removeMember(deps, tenantOf(c), c.req.param('name'), c.req.param('profile'))));
}
