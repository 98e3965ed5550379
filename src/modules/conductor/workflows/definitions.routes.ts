import { Hono } from 'hono';
import { readJson } from '../../../shared/http.ts';
import { doc } from '../../../shared/route-doc.ts';
import { noContent, pageOf, sendList, tenantOf } from '../../crud/index.ts';
import type { IdentityEnv } from '../identity/index.ts';
import type { EngineDeps } from './engine.ts';
import { createDefinition, deleteOneDefinition, getOneDefinition, listAllDefinitions, updateOneDefinition } from './definitions.service.ts';
import * as v from 'valibot';
import { DefinitionAnswer, DefinitionBody, DefinitionView, UpdateDefinitionBody, WorkflowPageQuery } from './workflow.schema.ts';
import { WORKFLOW_LISTS } from './workflows.routes.ts';

/** `/api/workflows/definitions`: create (201), list, get, update, delete (204). */
export function definitionRoutes(deps: Pick<EngineDeps, 'db'>): Hono<IdentityEnv> {
  return new Hono<IdentityEnv>()
    .post('/', doc({ summary: 'Create a workflow definition', description: 'A named, reusable graph of nodes that workflow runs and schedules start from.', body: DefinitionBody, response: DefinitionAnswer, status: 201 }), async (c) => c.json({ workflowDefinition: await createDefinition(deps, tenantOf(c), await readJson(c, DefinitionBody)) }, 201))
    .get('/', doc({ summary: 'List workflow definitions', description: 'The tenant\'s workflow definitions, 200 a page by default (and at most), with X-Total-Count.', query: WorkflowPageQuery, response: v.array(DefinitionView) }), async (c) => {
      const page = pageOf(c, WORKFLOW_LISTS);
      return sendList(c, page, await listAllDefinitions(deps, tenantOf(c), page));
    })
    .get('/:id', doc({ summary: 'Get a workflow definition', description: 'One definition with its nodes.', response: DefinitionAnswer }), async (c) => c.json({ workflowDefinition: await getOneDefinition(deps, tenantOf(c), c.req.param('id')) }))
    .put('/:id', doc({ summary: 'Update a workflow definition', description: 'Changes the name or nodes sent; runs already started keep the nodes they started with. What a GET answers can be sent back.', body: UpdateDefinitionBody, response: DefinitionAnswer }), async (c) => c.json({ workflowDefinition: await updateOneDefinition(deps, tenantOf(c), c.req.param('id'), await readJson(c, UpdateDefinitionBody)) }))
    .delete('/:id', doc({ summary: 'Delete a workflow definition', description: 'Deletes it; 409 while schedules start from it (delete them first).', status: 204, errors: [409] }), async (c) => {
      await deleteOneDefinition(deps, tenantOf(c), c.req.param('id'));
      return noContent(c);
    });
}
