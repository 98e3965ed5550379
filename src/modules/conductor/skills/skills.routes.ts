import { doc } from '../../../shared/route-doc.ts';
import { Hono } from 'hono';
import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { conflict } from '../../../shared/errors.ts';
import { readJson } from '../../../shared/http.ts';
import type { IdentityEnv } from '../identity/index.ts';
import { found, inTenant, noContent, pageOf, sendList, tenantOf } from '../../crud/index.ts';
import { SkillBody } from './skill.schema.ts';
import { deleteSkill, insertSkill, listSkills, skillsNamed } from './skills.repo.ts';
import { commitImport, dryRun } from './skill-import.service.ts';
import { readUpload } from './skill-upload.ts';

/**
 * `/api/skills`: the tenant's skill catalog. Create (201; 409 when the name is taken), list (without bodies), read one
 * (with its SKILL.md body), delete (204; a platform skill leaves a tombstone). Staged import: `POST /import` (multipart,
 * one skill folder) is the dry run, `POST /import/{stagingId}` commits it (201). Not to be confused with
 * `/v1/skills`, the agents API. Mounted at `/skills`.
 */
export function skillRoutes(deps: { db: Kysely<DB> }): Hono<IdentityEnv> {
  return new Hono<IdentityEnv>()
    .post('/', doc({ body: SkillBody }), async (c) => {
      const body = await readJson(c, SkillBody);
      const skill = await inTenant(deps.db, c, (tx) => insertSkill(tx, tenantOf(c), body));
      if (!skill) throw conflict(`skill ${body.name} already exists`);
      return c.json(skill, 201);
    })
    .post('/import', async (c) => c.json(await dryRun(deps.db, tenantOf(c), await readUpload(c))))
    .post('/import/:stagingId', async (c) => c.json(await commitImport(deps.db, tenantOf(c), c.req.param('stagingId')), 201))
    .get('/', async (c) => {
      const page = pageOf(c);
      const { items, total } = await inTenant(deps.db, c, (tx) => listSkills(tx, page));
      return sendList(c, page, { items: items.map(({ body: _body, ...rest }) => rest), total });
    })
    .get('/:name', async (c) => {
      const name = c.req.param('name');
      const [skill] = await inTenant(deps.db, c, (tx) => skillsNamed(tx, [name]));
      return c.json(found(skill, `unknown skill: ${name}`));
    })
    .delete('/:name', async (c) => {
      const name = c.req.param('name');
      found(await inTenant(deps.db, c, (tx) => deleteSkill(tx, tenantOf(c), name)), `unknown skill: ${name}`);
      return noContent(c);
    });
}
