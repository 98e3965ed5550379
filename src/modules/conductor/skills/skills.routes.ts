import { Hono } from 'hono';
import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { conflict } from '../../../shared/errors.ts';
import { readJson } from '../../../shared/http.ts';
import type { IdentityEnv } from '../identity/index.ts';
import { found, inTenant, noContent, pageOf, sendList, tenantOf } from '../../crud/index.ts';
import { SkillBody } from './skill.schema.ts';
import { deleteSkill, insertSkill, listSkills, skillsNamed } from './skills.repo.ts';

/**
 * `/api/skills`: the tenant's skill catalog. Create (201; 409 when the name is taken), list (without bodies), read one
 * (with its SKILL.md body), delete (204). Not to be confused with `/v1/skills`, the agents API. Mounted at `/skills`.
 */
export function skillRoutes(deps: { db: Kysely<DB> }): Hono<IdentityEnv> {
  return new Hono<IdentityEnv>()
    .post('/', async (c) => {
      const body = await readJson(c, SkillBody);
      const skill = await inTenant(deps.db, c, (tx) => insertSkill(tx, tenantOf(c), body));
      if (!skill) throw conflict(`skill ${body.name} already exists`);
      return c.json(skill, 201);
    })
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
      found(await inTenant(deps.db, c, (tx) => deleteSkill(tx, name)), `unknown skill: ${name}`);
      return noContent(c);
    });
}
