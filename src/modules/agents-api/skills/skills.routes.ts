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
import { CursorQuery, READ_ERRORS, WRITE_ERRORS } from '../wire.schema.ts';
import { SkillDeleted, SkillObject, SkillPage, SkillVersionDeleted, SkillVersionObject, SkillVersionPage } from './skills.schema.ts';
import * as skills from './skills.service.ts';

const UpdateBody = v.object({ default_version: v.union([v.string(), v.pipe(v.number(), v.integer())], 'a version number such as "2"') });

const UPLOAD_FORM = {
  'files[]': { description: "One file of the skill's directory, its filename the path relative to the directory's parent (`my-skill/SKILL.md`)", file: true, multiple: true },
  files: { description: 'The skill as one zip archive (instead of files[] parts)', file: true },
} as const;
const UPLOAD = 'A multipart/form-data upload of the skill: its directory as `files[]` parts named by their relative paths (`my-skill/SKILL.md`, …), or one zip as `files`. SKILL.md needs front matter with a `name` and a `description`.';

const DOCS = {
  create: doc({ summary: 'Create a skill', description: `${UPLOAD} The upload becomes version 1, the default.`, form: UPLOAD_FORM, response: SkillObject, errors: [...WRITE_ERRORS, 413] }),
  list: doc({ summary: 'List skills', description: 'The skills of the organisation, newest first by default.', query: CursorQuery, response: SkillPage, errors: READ_ERRORS }),
  get: doc({ summary: 'Get a skill', description: 'The skill, named and described by its default version, with its default and latest version numbers.', response: SkillObject, errors: READ_ERRORS }),
  update: doc({ summary: "Set a skill's default version", description: 'Makes an existing version the default (the one sessions get when they name no version).', body: UpdateBody, response: SkillObject, errors: WRITE_ERRORS }),
  delete: doc({ summary: 'Delete a skill', description: 'Deletes the skill and all its versions.', response: SkillDeleted, errors: WRITE_ERRORS }),
  content: doc({ summary: "Download a skill's default version", description: 'The default version as a zip archive.', responds: 'application/zip', errors: READ_ERRORS }),
  createVersion: doc({
    summary: 'Create a skill version',
    description: `${UPLOAD} The next version number is taken; a text field \`default=true\` also makes it the default.`,
    form: { ...UPLOAD_FORM, default: { description: '`true` makes the new version the default' } },
    response: SkillVersionObject,
    errors: [...WRITE_ERRORS, 413],
  }),
  listVersions: doc({ summary: "List a skill's versions", description: 'The versions of the skill by version number, newest first by default; `after` is a version id.', query: CursorQuery, response: SkillVersionPage, errors: READ_ERRORS }),
  getVersion: doc({ summary: 'Get a skill version', description: 'One version by number (or `latest`, `default`): its name and description.', response: SkillVersionObject, errors: READ_ERRORS }),
  deleteVersion: doc({
    summary: 'Delete a skill version',
    description: 'Deletes one version; its number is never reused. The default version cannot be deleted (400): set another default first, or delete the skill.',
    response: SkillVersionDeleted,
    errors: WRITE_ERRORS,
  }),
  versionContent: doc({ summary: 'Download a skill version', description: 'The version as a zip archive.', responds: 'application/zip', errors: READ_ERRORS }),
};

/** Routes 48–58: skills, their versions, and both zip content downloads (no beta header). */
export function skillsRoutes(deps: ResourceDeps): Hono<AgentsEnv> {
  const tenant = (c: Context<AgentsEnv>) => c.get('principal').tenantId;
  return new Hono<AgentsEnv>()
    .post('/', DOCS.create, async (c) => {
      const { files } = await readUpload(c);
      return c.json(await skills.createSkill(deps.db, tenant(c), files));
    })
    .get('/', DOCS.list, async (c) => c.json(await skills.listSkills(deps.db, tenant(c), readCursor(c))))
    .get('/:skill_id', DOCS.get, async (c) => c.json(await skills.getSkill(deps.db, tenant(c), c.req.param('skill_id'))))
    .post('/:skill_id', DOCS.update, async (c) => {
      const body = await readJson(c, UpdateBody);
      return c.json(await skills.setDefaultVersion(deps.db, tenant(c), c.req.param('skill_id'), String(body.default_version)));
    })
    .delete('/:skill_id', DOCS.delete, async (c) => c.json(await skills.deleteSkill(deps.db, tenant(c), c.req.param('skill_id'))))
    .get('/:skill_id/content', DOCS.content, async (c) => {
      const zip = await skills.versionArchive(deps.db, tenant(c), c.req.param('skill_id'));
      return binary(c, zip.archive, 'application/zip', zip.filename);
    })
    .post('/:skill_id/versions', DOCS.createVersion, async (c) => {
      const { files, makeDefault } = await readUpload(c);
      return c.json(await skills.createVersion(deps.db, tenant(c), c.req.param('skill_id'), files, makeDefault));
    })
    .get('/:skill_id/versions', DOCS.listVersions, async (c) => c.json(await skills.listVersions(deps.db, tenant(c), c.req.param('skill_id'), readCursor(c))))
    .get('/:skill_id/versions/:version', DOCS.getVersion, async (c) => c.json(await skills.getVersion(deps.db, tenant(c), c.req.param('skill_id'), c.req.param('version'))))
    .delete('/:skill_id/versions/:version', DOCS.deleteVersion, async (c) => c.json(await skills.deleteVersion(deps.db, tenant(c), c.req.param('skill_id'), c.req.param('version'))))
    .get('/:skill_id/versions/:version/content', DOCS.versionContent, async (c) => {
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
