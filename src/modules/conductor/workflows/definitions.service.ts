import { withTenant } from '../../../db/index.ts';
import { conflict, notFound } from '../../../shared/errors.ts';
import { prefixedId } from '../../../shared/ids.ts';
import type { EngineDeps } from './engine.ts';
import type { DefinitionBody, NodeBody } from './workflow.schema.ts';
import { definitionHasSchedules, deleteDefinition, getDefinition, insertDefinition, listDefinitions, updateDefinition, type Definition } from './definitions.repo.ts';
import { checkNodes, toSpec } from './workflows.service.ts';

/** Workflow definitions: a named node list, validated like a run's, that runs and schedules start from. */
type Deps = Pick<EngineDeps, 'db'>;

export function createDefinition(deps: Deps, tenantId: string, body: DefinitionBody): Promise<Definition> {
  return withTenant(deps.db, tenantId, async (tx) => {
    const nodes = body.nodes.map(toSpec);
    await checkNodes(tx, nodes);
    return insertDefinition(tx, { id: prefixedId('wfd'), tenantId, name: body.name, nodes });
  });
}

export function listAllDefinitions(deps: Deps, tenantId: string, page: { limit: number; offset: number }) {
  return withTenant(deps.db, tenantId, (tx) => listDefinitions(tx, page));
}

export async function getOneDefinition(deps: Deps, tenantId: string, id: string): Promise<Definition> {
  const def = await withTenant(deps.db, tenantId, (tx) => getDefinition(tx, id));
  if (!def) throw notFound(`unknown workflow definition: ${id}`);
  return def;
}

/** Changes the name and/or the nodes; runs already started keep the nodes they were created with. */
export async function updateOneDefinition(deps: Deps, tenantId: string, id: string, body: { name?: string; nodes?: NodeBody[] }): Promise<Definition> {
  return withTenant(deps.db, tenantId, async (tx) => {
    const nodes = body.nodes?.map(toSpec);
    if (nodes) await checkNodes(tx, nodes);
    const def = await updateDefinition(tx, id, { name: body.name, nodes });
    if (!def) throw notFound(`unknown workflow definition: ${id}`);
    return def;
  });
}

/** Deletes a definition no schedule uses (409 otherwise: delete or repoint its schedules first). */
export async function deleteOneDefinition(deps: Deps, tenantId: string, id: string): Promise<void> {
  await withTenant(deps.db, tenantId, async (tx) => {
    if (await definitionHasSchedules(tx, id)) throw conflict(`workflow definition ${id} has schedules; delete them first`);
    if (!(await deleteDefinition(tx, id))) throw notFound(`unknown workflow definition: ${id}`);
  });
}
