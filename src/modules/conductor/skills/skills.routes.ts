import { doc } from '../../../shared/route-doc.ts';
import { Hono } from 'hono';
import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { conflict } from '../../../shared/errors.ts';
import { readJson } from '../../../shared/http.ts';
import type { IdentityEnv } from '../identity/index.ts';
import { found, inTenant, noContent, pageOf, sendList, tenantOf } from '../../crud/index.ts';
import * as v from 'valibot';
import { ImportDryRun, SkillBody, SkillSummary, SkillView } from './skill.schema.ts';
import { PageQuery } from '../list-query.ts';
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
    .post('/', doc({ summary: 'Create a skill', description: 'Adds a skill to the tenant\'s catalog: its SKILL.md `body` and the manifest of its resource files. Profiles name it in `skills`. 409 when the name is taken.', body: SkillBody, response: SkillView, status: 201, errors: [409] }), async (c) => {
      const body = await readJson(c, SkillBody);
      const skill = await inTenant(deps.db, c, (tx) => insertSkill(tx, tenantOf(c), body));
      if (!skill) throw conflict(`skill ${body.name} already exists`);
      return c.json(skill, 201);
    })
    .post('/import', doc({ summary: 'Check a skill folder for import', description: 'The dry run of an import: a multipart/form-data body with one file part per file of the skill folder (or one zip of it), and `executable` fields naming executable files. Answers what the package holds and a staging id to commit it with; a package that fails validation is answered 400 with the same facts, and nothing is staged.', form: { file: { description: 'One file of the skill folder (any part name), its filename the path inside the folder; or one zip of the folder', file: true, multiple: true, required: true }, executable: { description: 'The path of a file to mark executable (multipart has no file modes); repeatable', multiple: true } }, response: ImportDryRun, errors: [400, 413] }), async (c) => c.json(await dryRun(deps.db, tenantOf(c), await readUpload(c))))
    .post('/import/:stagingId', doc({ summary: 'Commit a skill import', description: 'Registers the staged skill (source `imported`). 404 when the staging id expired, was committed or never existed; 409 when the name has been taken since.', response: SkillView, status: 201, errors: [409] }), async (c) => c.json(await commitImport(deps.db, tenantOf(c), c.req.param('stagingId')), 201))
    .get('/', doc({ summary: 'List skills', description: 'The tenant\'s skill catalog by name, without the SKILL.md bodies. With `limit`, a page and X-Total-Count.', query: PageQuery, response: v.array(SkillSummary) }), async (c) => {
      const page = pageOf(c);
      const { items, total } = await inTenant(deps.db, c, (tx) => listSkills(tx, page));
      return sendList(c, page, { items: items.map(({ body: _body, ...rest }) => rest), total });
    })
    .get('/:name', doc({ summary: 'Get a skill', description: 'One skill with its SKILL.md body and resources.', response: SkillView }), async (c) => {
      const name = c.req.param('name');
      const [skill] = await inTenant(deps.db, c, (tx) => skillsNamed(tx, [name]));
      return c.json(found(skill, `unknown skill: ${name}`));
    })
    .delete('/:name', doc({ summary: 'Delete a skill', description: 'Removes the skill from the catalog; a platform skill stays removed for this tenant.', status: 204 }), async (c) => {
      const name = c.req.param('name');
      found(await inTenant(deps.db, c, (tx) => deleteSkill(tx, tenantOf(c), name)), `unknown skill: ${name}`);
      return noContent(c);
    });
}
