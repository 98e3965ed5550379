import { doc } from '../../../shared/route-doc.ts';
import { Hono, type Context } from 'hono';
import * as v from 'valibot';
import { badRequest } from '../../../shared/errors.ts';
import { readJson } from '../../../shared/http.ts';
import type { AgentsEnv } from '../context.ts';
import type { ResourceDeps } from '../deps.ts';
import { readCursor } from '../../crud/index.ts';
import { Base64 } from '../validation.ts';
import { CursorQuery, READ_ERRORS, WRITE_ERRORS } from '../wire.schema.ts';
import {
  EnvironmentFileObject,
  EnvironmentFilePage,
  EnvironmentFilesQuery,
  EnvironmentInfoObject,
  EnvironmentTemplateDeleted,
  EnvironmentTemplateObject,
  EnvironmentTemplatePage,
  TemplateParams,
} from './environment.schema.ts';
import { addEnvironmentFile, listEnvironmentFiles } from './environment-files.service.ts';
import { getEnvironmentInfo } from './environments.service.ts';
import * as templates from './templates.service.ts';

const NonEmpty = v.pipe(v.string(), v.minLength(1, 'a non-empty string'));
const FileCreate = v.variant('type', [
  v.object({ type: v.literal('inline'), path: NonEmpty, data: Base64 }),
  v.object({ type: v.literal('file_id'), path: NonEmpty, file_id: NonEmpty }),
]);

const DOCS = {
  createTemplate: doc({
    summary: 'Create an environment template',
    description:
      'Saves a reusable hosted-environment configuration (files, packages, network policy, skills, plugins, environment variables, setup commands) that sessions start from with `environment_template_id`. `env`, `setup_commands` and file contents are stored sealed and never returned.',
    body: TemplateParams,
    response: EnvironmentTemplateObject,
    errors: WRITE_ERRORS,
  }),
  listTemplates: doc({ summary: 'List environment templates', description: 'The environment templates of the organisation, newest first by default.', query: CursorQuery, response: EnvironmentTemplatePage, errors: READ_ERRORS }),
  getTemplate: doc({ summary: 'Get an environment template', description: 'One template, without its secrets (`env`, `setup_commands`) or file contents.', response: EnvironmentTemplateObject, errors: READ_ERRORS }),
  updateTemplate: doc({
    summary: 'Update an environment template',
    description: 'Each field sent replaces the stored one (`name: null` clears the name); omitted fields stay. Environments already created from it do not change.',
    body: TemplateParams,
    response: EnvironmentTemplateObject,
    errors: WRITE_ERRORS,
  }),
  deleteTemplate: doc({ summary: 'Delete an environment template', description: 'Deletes the template; environments created from it keep their configuration.', response: EnvironmentTemplateDeleted, errors: WRITE_ERRORS }),
  get: doc({ summary: 'Get an environment', description: "A session's environment: its status, workspace files, skills and plugins.", response: EnvironmentInfoObject, errors: READ_ERRORS }),
  addFile: doc({
    summary: 'Add a file to an environment',
    description: "Writes a file into the environment's workspace, inline (base64 `data`) or from an uploaded File (`file_id`); it reaches the session's sandbox before its next turn. Refused (400) once the environment has failed or expired.",
    body: FileCreate,
    response: EnvironmentFileObject,
    errors: WRITE_ERRORS,
  }),
  listFiles: doc({
    summary: "List an environment's files",
    description: 'The workspace files of the environment in path order (case-sensitive by component, reverse by default), one token page at a time: the next page is `page=<next>`.',
    query: EnvironmentFilesQuery,
    response: EnvironmentFilePage,
    errors: READ_ERRORS,
  }),
};

/**
 * Routes 26–33 under `/agents/environments`. The literal `templates` routes are registered before the
 * `{environment_id}` routes, so `GET /agents/environments/templates` lists templates (spec §8 item 14).
 */
export function environmentsRoutes(deps: ResourceDeps): Hono<AgentsEnv> {
  const tenant = (c: Context<AgentsEnv>) => c.get('principal').tenantId;
  return new Hono<AgentsEnv>()
    .post('/templates', DOCS.createTemplate, async (c) => c.json(await templates.createTemplate(deps, tenant(c), await readJson(c, TemplateParams))))
    .get('/templates', DOCS.listTemplates, async (c) => c.json(await templates.listTemplates(deps.db, tenant(c), readCursor(c))))
    .get('/templates/:template_id', DOCS.getTemplate, async (c) => c.json(await templates.getTemplate(deps.db, tenant(c), c.req.param('template_id'))))
    .post('/templates/:template_id', DOCS.updateTemplate, async (c) =>
      c.json(await templates.updateTemplate(deps, tenant(c), c.req.param('template_id'), await readJson(c, TemplateParams))),
    )
    .delete('/templates/:template_id', DOCS.deleteTemplate, async (c) => c.json(await templates.deleteTemplate(deps.db, tenant(c), c.req.param('template_id'))))
    .get('/:environment_id', DOCS.get, async (c) => c.json(await getEnvironmentInfo(deps, tenant(c), c.req.param('environment_id'))))
    .post('/:environment_id/files', DOCS.addFile, async (c) => c.json(await addEnvironmentFile(deps, tenant(c), c.req.param('environment_id'), await readJson(c, FileCreate))))
    .get('/:environment_id/files', DOCS.listFiles, async (c) => {
      const { limit, order } = readCursor(c);
      if (c.req.query('after')) throw badRequest('after: environment files page with `page` tokens, not `after`');
      const page = c.req.query('page') || undefined;
      const path = c.req.query('path') || undefined;
      return c.json(await listEnvironmentFiles(deps, tenant(c), c.req.param('environment_id'), { page, limit, order, path }));
    });
}
