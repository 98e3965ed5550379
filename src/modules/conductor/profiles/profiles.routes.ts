import { doc } from '../../../shared/route-doc.ts';
import { Hono, type Context } from 'hono';
import { readJson } from '../../../shared/http.ts';
import { badRequest } from '../../../shared/errors.ts';
import { mcpUrlProblem } from '../runs/mcp-address.ts';
import type { IdentityEnv } from '../identity/index.ts';
import * as v from 'valibot';
import { ProfileSchema } from '../../../contracts/api-resources.ts';
import { pageOf, PageQuery, sendList } from '../../crud/index.ts';
import { ProfileBody, ProfileHistoryEntry, ProfileUsage, SeededHelper } from './profile.schema.ts';
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
    .get('/', doc({ summary: 'List profiles', description: 'The tenant’s profiles, pinned ones first, then by name. With `limit` one page and the full count in X-Total-Count.', query: PageQuery, response: v.array(ProfileSchema) }), async (c) => {
      const page = pageOf(c);
      return sendList(c, page, await listProfiles(deps, c.get('principal').tenantId, page));
    })
    .post(
      '/',
      doc({
        summary: 'Create a profile',
        description:
          'Stores a new profile (an agent’s runtime, model, system prompt, tools, skills, MCP servers and limits) and sends it to the runners. Its name is unique in the tenant (409); unknown fields are refused, naming the close one.',
        body: ProfileBody,
        response: ProfileSchema,
        status: 201,
        errors: [409],
      }), async (c) => c.json(await createProfile(deps, c.get('principal').tenantId, await readProfile(c), actorOf(c.get('principal'))), 201))
    .post(
      '/helper',
      doc({
        summary: 'Add the helper profile',
        description: 'Creates the built-in `helper` profile (a general assistant on the demo model, no provider key needed) unless it exists: 201 when created, 200 with `created: false` when it was already there.',
        response: SeededHelper,
        status: 201,
      }),
      async (c) => {
      const seeded = await seedHelper(deps, c.get('principal').tenantId, actorOf(c.get('principal')));
      return c.json(seeded, seeded.created ? 201 : 200);
    })
    .get('/:name', doc({ summary: 'Get a profile', description: 'The profile as stored, with `pinned` and, for sandbox workers, `workerPlacement` (read-only fields a PUT accepts back).', response: ProfileSchema }), async (c) => c.json(await getProfile(deps, c.get('principal').tenantId, c.req.param('name'))))
    .put(
      '/:name',
      doc({
        summary: 'Replace a profile',
        description: 'Replaces the whole profile (fields left out are removed) and sends it to the runners; the body’s name must be the path’s (profiles are not renamed). Sessions already open keep the profile they started with.',
        body: ProfileBody,
        response: ProfileSchema,
      }), async (c) =>
      c.json(await replaceProfileByName(deps, c.get('principal').tenantId, c.req.param('name'), await readProfile(c), actorOf(c.get('principal')))),
    )
    .delete('/:name', doc({ summary: 'Delete a profile', description: 'Deletes the profile and removes it from the runners. Its past runs and sessions stay readable.', status: 204 }), async (c) => {
      await deleteProfile(deps, c.get('principal').tenantId, c.req.param('name'));
      return c.body(null, 204);
    })
    .post('/:name/pin', doc({ summary: 'Pin a profile', description: 'Pins the profile: pinned profiles come first in lists.', response: ProfileSchema }), async (c) => c.json(await pinProfile(deps, c.get('principal').tenantId, c.req.param('name'), true)))
    .delete('/:name/pin', doc({ summary: 'Unpin a profile', description: 'Unpins the profile.', response: ProfileSchema }), async (c) => c.json(await pinProfile(deps, c.get('principal').tenantId, c.req.param('name'), false)))
    .get(
      '/:name/history',
      doc({ summary: 'List a profile’s changes', description: 'Every version of the profile, newest first: when, by whom, and each changed field with its old and new value.', query: PageQuery, response: v.array(ProfileHistoryEntry) }),
      async (c) => {
      const page = pageOf(c);
      return sendList(c, page, await profileHistory(deps, c.get('principal').tenantId, c.req.param('name'), page));
    })
    .get(
      '/:name/usage',
      doc({
        summary: 'Get a profile’s usage',
        description: 'How many runs of the profile there were in the window (default 30 days), how many failed, their tokens and their cost, in total and per model.',
        query: v.object({ window: v.optional(v.picklist(['1h', '24h', '7d', '30d', '90d', 'all'])) }),
        response: ProfileUsage,
      }),
      async (c) => c.json(await profileUsageTotals(deps, c.get('principal').tenantId, c.req.param('name'), c.req.query('window') || undefined)))
    .post('/:name/skills/:skill', doc({ summary: 'Attach a skill to a profile', description: 'Adds a skill of the tenant’s catalog to the profile (unknown skills are a 400) and answers the updated profile.', response: ProfileSchema, errors: [400] }), async (c) =>
      c.json(await attachSkill(deps, c.get('principal').tenantId, c.req.param('name'), c.req.param('skill'), actorOf(c.get('principal')))),
    )
    .delete('/:name/skills/:skill', doc({ summary: 'Detach a skill from a profile', description: 'Removes the skill from the profile and answers the updated profile; 404 when the profile does not have it.', response: ProfileSchema }), async (c) =>
      c.json(await detachSkill(deps, c.get('principal').tenantId, c.req.param('name'), c.req.param('skill'), actorOf(c.get('principal')))),
    );
}
