import { doc } from '../../../shared/route-doc.ts';
import { Hono, type Context } from 'hono';
import * as v from 'valibot';
import { badRequest } from '../../../shared/errors.ts';
import { readJson } from '../../../shared/http.ts';
import type { AgentsEnv } from '../context.ts';
import type { ResourceDeps } from '../deps.ts';
import { readCursor } from '../../crud/index.ts';
import { Base64 } from '../validation.ts';
import { TemplateParams } from './environment.schema.ts';
import { addEnvironmentFile, listEnvironmentFiles } from './environment-files.service.ts';
import { getEnvironmentInfo } from './environments.service.ts';
import * as templates from './templates.service.ts';

const NonEmpty = v.pipe(v.string(), v.minLength(1, 'a non-empty string'));
const FileCreate = v.variant('type', [
  v.object({ type: v.literal('inline'), path: NonEmpty, data: Base64 }),
  v.object({ type: v.literal('file_id'), path: NonEmpty, file_id: NonEmpty }),
]);

/**
 * Routes 26–33 under `/agents/environments`. The literal `templates` routes are registered before the
 * `{environment_id}` routes, so `GET /agents/environments/templates` lists templates (spec §8 item 14).
 */
export function environmentsRoutes(deps: ResourceDeps): Hono<AgentsEnv> {
  const tenant = (c: Context<AgentsEnv>) => c.get('principal').tenantId;
  return new Hono<AgentsEnv>()
    .post('/templates', doc({ body: TemplateParams }), async (c) => c.json(await templates.createTemplate(deps, tenant(c), await readJson(c, TemplateParams))))
    .get('/templates', async (c) => c.json(await templates.listTemplates(deps.db, tenant(c), readCursor(c))))
    .get('/templates/:template_id', async (c) => c.json(await templates.getTemplate(deps.db, tenant(c), c.req.param('template_id'))))
    .post('/templates/:template_id', doc({ body: TemplateParams }), async (c) =>
      c.json(await templates.updateTemplate(deps, tenant(c), c.req.param('template_id'), await readJson(c, TemplateParams))),
    )
    .delete('/templates/:template_id', async (c) => c.json(await templates.deleteTemplate(deps.db, tenant(c), c.req.param('template_id'))))
    .get('/:environment_id', async (c) => c.json(await getEnvironmentInfo(deps, tenant(c), c.req.param('environment_id'))))
    .post('/:environment_id/files', doc({ body: FileCreate }), async (c) => c.json(await addEnvironmentFile(deps, tenant(c), c.req.param('environment_id'), await readJson(c, FileCreate))))
    .get('/:environment_id/files', async (c) => {
      const { limit, order } = readCursor(c);
      if (c.req.query('after')) throw badRequest('after: environment files page with `page` tokens, not `after`');
      const page = c.req.query('page') || undefined;
      const path = c.req.query('path') || undefined;
      return c.json(await listEnvironmentFiles(deps, tenant(c), c.req.param('environment_id'), { page, limit, order, path }));
    });
}
