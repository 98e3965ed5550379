import { doc } from '../../../shared/route-doc.ts';
import { Hono } from 'hono';
import { readJson } from '../../../shared/http.ts';
import type { IdentityEnv } from '../identity/index.ts';
import { pageOf, sendList } from '../../crud/index.ts';
import { ProfileBody } from './profile.schema.ts';
import { createProfile, deleteProfile, getProfile, listProfiles, replaceProfileByName, type ProfileDeps } from './profiles.service.ts';

/** `/api/profiles`. `/api/profiles/{name}/runs` is mounted by the runs routes. */
export function profileRoutes(deps: ProfileDeps): Hono<IdentityEnv> {
  return new Hono<IdentityEnv>()
    .get('/', async (c) => {
      const page = pageOf(c);
      return sendList(c, page, await listProfiles(deps, c.get('principal').tenantId, page));
    })
    .post('/', doc({ body: ProfileBody }), async (c) => c.json(await createProfile(deps, c.get('principal').tenantId, await readJson(c, ProfileBody)), 201))
    .get('/:name', async (c) => c.json(await getProfile(deps, c.get('principal').tenantId, c.req.param('name'))))
    .put('/:name', doc({ body: ProfileBody }), async (c) => c.json(await replaceProfileByName(deps, c.get('principal').tenantId, c.req.param('name'), await readJson(c, ProfileBody))))
    .delete('/:name', async (c) => {
      await deleteProfile(deps, c.get('principal').tenantId, c.req.param('name'));
      return c.body(null, 204);
    });
}
