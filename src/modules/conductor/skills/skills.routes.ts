import { Hono } from 'hono';
import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { withTenant, type Tx } from '../../../db/index.ts';
import { conflict, notFound } from '../../../shared/errors.ts';
import { readJson } from '../../../shared/http.ts';
import type { IdentityEnv } from '../identity/index.ts';
import { pageOf, sendList } from '../http.ts';
import { SkillBody } from './skill.schema.ts';
import { deleteSkill, insertSkill, listSkills, skillsNamed } from './skills.repo.ts';

/**
 * `/api/skills`: the tenant's skill catalog. Create (201; 409 when the name is taken), list (without bodies), read one
 * (with its SKILL.md body), delete (204). Not to be confused with `/v1/skills`, the agents API. Mounted at `/skills`.
 */
export function skillRoutes(deps: { db: Kysely<DB> }): Hono<IdentityEnv> {
  const inTenant = <T>(tenantId: string, fn: (tx: Tx) => Promise<T>) => withTenant(deps.db, tenantId, fn);
  return new Hono<IdentityEnv>()
    .post('/', async (c) => {
      const tenantId = c.get('principal').tenantId;
      const body = await readJson(c, SkillBody);
      const skill = await inTenant(tenantId, (tx) => insertSkill(tx, tenantId, body));
      if (!skill) throw conflict(`skill ${body.name} already exists`);
      return c.json(skill, 201);
    })
    .get('/', async (c) => {
      const page = pageOf(c);
      const { items, total } = await inTenant(c.get('principal').tenantId, (tx) => listSkills(tx, page));
      return sendList(c, page, { items: items.map(({ body: _body, ...rest }) => rest), total });
    })
    .get('/:name', async (c) => {
      const name = c.req.param('name');
      const [skill] = await inTenant(c.get('principal').tenantId, (tx) => skillsNamed(tx, [name]));
      if (!skill) throw notFound(`unknown skill: ${name}`);
      return c.json(skill);
    })
    .delete('/:name', async (c) => {
      const name = c.req.param('name');
      if (!(await inTenant(c.get('principal').tenantId, (tx) => deleteSkill(tx, name)))) throw notFound(`unknown skill: ${name}`);
      return c.body(null, 204);
    });
}
