import { doc } from '../../../shared/route-doc.ts';
import { Hono, type Context } from 'hono';
import * as v from 'valibot';
import { badRequest } from '../../../shared/errors.ts';
import { readJson } from '../../../shared/http.ts';
import { binary } from '../binary.ts';
import type { AgentsEnv } from '../context.ts';
import type { ResourceDeps } from '../deps.ts';
import { isMultipart, readParts, textField } from '../multipart.ts';
import { readCursor } from '../../crud/index.ts';
import { collectSkillFiles, type SkillFile } from './skill-archive.ts';
import * as skills from './skills.service.ts';

const UpdateBody = v.object({ default_version: v.union([v.string(), v.pipe(v.number(), v.integer())], 'a version number such as "2"') });

/** Routes 48–58: skills, their versions, and both zip content downloads (no beta header). */
export function skillsRoutes(deps: ResourceDeps): Hono<AgentsEnv> {
  const tenant = (c: Context<AgentsEnv>) => c.get('principal').tenantId;
  return new Hono<AgentsEnv>()
    .post('/', async (c) => {
      const { files } = await readUpload(c);
      return c.json(await skills.createSkill(deps.db, tenant(c), files));
    })
    .get('/', async (c) => c.json(await skills.listSkills(deps.db, tenant(c), readCursor(c))))
    .get('/:skill_id', async (c) => c.json(await skills.getSkill(deps.db, tenant(c), c.req.param('skill_id'))))
    .post('/:skill_id', doc({ body: UpdateBody }), async (c) => {
      const body = await readJson(c, UpdateBody);
      return c.json(await skills.setDefaultVersion(deps.db, tenant(c), c.req.param('skill_id'), String(body.default_version)));
    })
    .delete('/:skill_id', async (c) => c.json(await skills.deleteSkill(deps.db, tenant(c), c.req.param('skill_id'))))
    .get('/:skill_id/content', async (c) => {
      const zip = await skills.versionArchive(deps.db, tenant(c), c.req.param('skill_id'));
      return binary(c, zip.archive, 'application/zip', zip.filename);
    })
    .post('/:skill_id/versions', async (c) => {
      const { files, makeDefault } = await readUpload(c);
      return c.json(await skills.createVersion(deps.db, tenant(c), c.req.param('skill_id'), files, makeDefault));
    })
    .get('/:skill_id/versions', async (c) => c.json(await skills.listVersions(deps.db, tenant(c), c.req.param('skill_id'), readCursor(c))))
    .get('/:skill_id/versions/:version', async (c) => c.json(await skills.getVersion(deps.db, tenant(c), c.req.param('skill_id'), c.req.param('version'))))
    .delete('/:skill_id/versions/:version', async (c) => c.json(await skills.deleteVersion(deps.db, tenant(c), c.req.param('skill_id'), c.req.param('version'))))
    .get('/:skill_id/versions/:version/content', async (c) => {
      const zip = await skills.versionArchive(deps.db, tenant(c), c.req.param('skill_id'), c.req.param('version'));
      return binary(c, zip.archive, 'application/zip', zip.filename);
    });
}

/**
 * The body of a skill or version create. The SDK sends JSON `{}` when no files are given: that (and any JSON body)
 * is a 400 naming `files`, since a skill cannot exist without its SKILL.md.
 */
async function readUpload(c: Context<AgentsEnv>): Promise<{ files: SkillFile[]; makeDefault: boolean }> {
  if (!isMultipart(c)) throw badRequest('files: at least one file is required (multipart/form-data with files[] parts, or a single zip as files)');
  const parts = await readParts(c);
  const flag = textField(parts, 'default');
  if (flag !== undefined && flag !== 'true' && flag !== 'false') throw badRequest(`default: expected "true" or "false", received "${flag}"`);
  return { files: await collectSkillFiles(parts), makeDefault: flag === 'true' };
}
