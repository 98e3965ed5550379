import { doc } from '../../../shared/route-doc.ts';
import { Hono, type Context } from 'hono';
import { readJson } from '../../../shared/http.ts';
import { badRequest } from '../../../shared/errors.ts';
import { mcpUrlProblem } from '../runs/mcp-address.ts';
import type { IdentityEnv } from '../identity/index.ts';
import { pageOf, sendList } from '../../crud/index.ts';
import { ProfileBody } from './profile.schema.ts';
import {
  actorOf,
  attachSkill,
  createProfile,
  deleteProfile,
  detachSkill,
  getProfile,
  listProfiles,
  pinProfile,
  profileHistory,
  profileUsageTotals,
  replaceProfileByName,
  seedHelper,
  type ProfileDeps,
} from './profiles.service.ts';

/**
 * `/api/profiles`: CRUD (seed 000) and the other operations (issue 23): pin and unpin, history, usage, attach and
 * detach a skill, seed the helper profile. `/api/profiles/{name}/runs` is mounted by the runs routes.
 */
export function profileRoutes(deps: ProfileDeps): Hono<IdentityEnv> {
  /** The body, its MCP server URLs refused (400) where the address policy refuses them as written. */
  const readProfile = async (c: Context<IdentityEnv>) => {
    const body = await readJson(c, ProfileBody);
    const problem = mcpUrlProblem((body.mcpServers ?? []).map((s, i) => ({ url: s.url, field: `mcpServers.${i}.url` })), deps.privateAddresses);
    if (problem) throw badRequest(problem);
    return body;
  };
  return new Hono<IdentityEnv>()
    .get('/', async (c) => {
      const page = pageOf(c);
      return sendList(c, page, await listProfiles(deps, c.get('principal').tenantId, page));
    })
    .post('/', doc({ body: ProfileBody }), async (c) => c.json(await createProfile(deps, c.get('principal').tenantId, await readProfile(c), actorOf(c.get('principal'))), 201))
    .post('/helper', async (c) => {
      const seeded = await seedHelper(deps, c.get('principal').tenantId, actorOf(c.get('principal')));
      return c.json(seeded, seeded.created ? 201 : 200);
    })
    .get('/:name', async (c) => c.json(await getProfile(deps, c.get('principal').tenantId, c.req.param('name'))))
    .put('/:name', doc({ body: ProfileBody }), async (c) =>
      c.json(await replaceProfileByName(deps, c.get('principal').tenantId, c.req.param('name'), await readProfile(c), actorOf(c.get('principal')))),
    )
    .delete('/:name', async (c) => {
      await deleteProfile(deps, c.get('principal').tenantId, c.req.param('name'));
      return c.body(null, 204);
    })
    .post('/:name/pin', async (c) => c.json(await pinProfile(deps, c.get('principal').tenantId, c.req.param('name'), true)))
    .delete('/:name/pin', async (c) => c.json(await pinProfile(deps, c.get('principal').tenantId, c.req.param('name'), false)))
    .get('/:name/history', async (c) => {
      const page = pageOf(c);
      return sendList(c, page, await profileHistory(deps, c.get('principal').tenantId, c.req.param('name'), page));
    })
    .get('/:name/usage', async (c) => c.json(await profileUsageTotals(deps, c.get('principal').tenantId, c.req.param('name'), c.req.query('window') || undefined)))
    .post('/:name/skills/:skill', async (c) =>
      c.json(await attachSkill(deps, c.get('principal').tenantId, c.req.param('name'), c.req.param('skill'), actorOf(c.get('principal')))),
    )
    .delete('/:name/skills/:skill', async (c) =>
      c.json(await detachSkill(deps, c.get('principal').tenantId, c.req.param('name'), c.req.param('skill'), actorOf(c.get('principal')))),
    );
}
