import { Hono } from 'hono';
import { readJson } from '../../../shared/http.ts';
import { doc } from '../../../shared/route-doc.ts';
import { noContent, pageOf, sendList, tenantOf } from '../../crud/index.ts';
import type { IdentityEnv } from '../identity/index.ts';
import type { EngineDeps } from './engine.ts';
import { createDefinition, deleteOneDefinition, getOneDefinition, listAllDefinitions, updateOneDefinition } from './definitions.service.ts';
import { DefinitionBody, UpdateDefinitionBody } from './workflow.schema.ts';
import { WORKFLOW_LISTS } from './workflows.routes.ts';

/** `/api/workflows/definitions`: create (201), list, get, update, delete (204). */
export function definitionRoutes(deps: Pick<EngineDeps, 'db'>): Hono<IdentityEnv> {
  return new Hono<IdentityEnv>()
    .post('/', doc({ body: DefinitionBody }), async (c) => c.json({ workflowDefinition: await createDefinition(deps, tenantOf(c), await readJson(c, DefinitionBody)) }, 201))
    .get('/', async (c) => {
      const page = pageOf(c, WORKFLOW_LISTS);
      return sendList(c, page, await listAllDefinitions(deps, tenantOf(c), page));
    })
    .get('/:id', async (c) => c.json({ workflowDefinition: await getOneDefinition(deps, tenantOf(c), c.req.param('id')) }))
    .put('/:id', doc({ body: UpdateDefinitionBody }), async (c) => c.json({ workflowDefinition: await updateOneDefinition(deps, tenantOf(c), c.req.param('id'), await readJson(c, UpdateDefinitionBody)) }))
    .delete('/:id', async (c) => {
      await deleteOneDefinition(deps, tenantOf(c), c.req.param('id'));
      return noContent(c);
    });
}
