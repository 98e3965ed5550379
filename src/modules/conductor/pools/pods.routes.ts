import { doc } from '../../../shared/route-doc.ts';
import { Hono } from 'hono';
import * as v from 'valibot';
import { readJson } from '../../../shared/http.ts';
import type { IdentityEnv } from '../identity/index.ts';
import { noContent, pageOf, sendList, tenantOf } from '../../crud/index.ts';
import { Member, PodPatch, PodView, PoolBody } from './pool.schema.ts';
import { PageQuery } from '../list-query.ts';
import { assertUnchanged } from '../../../shared/strict-body.ts';
import { addMember, createPool, deletePool, getPool, listPools, patchPool, pinPool, removeMember, type PoolDeps } from './pools.service.ts';

/**
 * `/api/pods` (variant B's name for pools, over the same rows): list (limit 200 by default, X-Total-Count always,
 * pinned first), get, create, update of the supplied fields, pin and unpin, add and remove a member, delete.
 */
const AddMember = v.object({ profile: Member.entries.profile, role: Member.entries.role });

export function podRoutes(deps: PoolDeps): Hono<IdentityEnv> {
  return new Hono<IdentityEnv>()
    .get('/', doc({ summary: 'List pods', description: 'The tenant\'s pods (pools under another name), pinned ones first, 200 a page by default, with X-Total-Count.', query: PageQuery, response: v.array(PodView) }), async (c) => {
      const page = pageOf(c, { defaultLimit: 200 });
      return sendList(c, page, await listPools(deps, tenantOf(c), page, { pinned: true }));
    })
    .post('/', doc({ summary: 'Create a pod', description: 'A named group of profiles with a shared filesystem policy (the same resource as a pool); unpinned at first. 409 when the name is taken.', body: PoolBody, response: PodView, status: 201, errors: [409] }), async (c) => c.json({ ...(await createPool(deps, tenantOf(c), await readJson(c, PoolBody), 'pod')), pinned: false }, 201))
    .get('/:name', doc({ summary: 'Get a pod', response: PodView, description: 'One pod by name, with its members and whether it is pinned.' }), async (c) => c.json(await getPool(deps, tenantOf(c), c.req.param('name'))))
    .patch('/:name', doc({ summary: 'Update a pod', description: 'Changes the fields sent (description, members, fs); a pod is not renamed, and what only a GET shows is ignored.', body: PodPatch, response: PodView }), async (c) => {
      const { name, ...patch } = await readJson(c, PodPatch);
      assertUnchanged('name', name, c.req.param('name'), 'a pod is not renamed (create one under the new name)');
      return c.json(await patchPool(deps, tenantOf(c), c.req.param('name'), patch));
    })
    .delete('/:name', doc({ summary: 'Delete a pod', description: 'Removes the pod from the tenant and from every runner; its profiles stay.', status: 204 }), async (c) => {
      await deletePool(deps, tenantOf(c), c.req.param('name'), 'pod');
      return noContent(c);
    })
    .post('/:name/pin', doc({ summary: 'Pin a pod', description: 'Pinned pods come first in the list.', response: PodView }), async (c) => c.json(await pinPool(deps, tenantOf(c), c.req.param('name'), true)))
    .delete('/:name/pin', doc({ summary: 'Unpin a pod', description: 'The pod goes back to its place by name in the list.', response: PodView }), async (c) => c.json(await pinPool(deps, tenantOf(c), c.req.param('name'), false)))
    .post('/:name/members', doc({ summary: 'Add a pod member', description: 'Adds a profile to the pod, or changes the role of one already in it.', body: AddMember, response: PodView }), async (c) => c.json(await addMember(deps, tenantOf(c), c.req.param('name'), await readJson(c, AddMember))))
    .delete('/:name/members/:profile', doc({ summary: 'Remove a pod member', description: 'Takes a profile out of the pod; 404 when it is no member.', response: PodView }), async (c) => c.json(await removeMember(deps, tenantOf(c), c.req.param('name'), c.req.param('profile'))));
}
