import type { Kysely } from 'kysely';
import type { DB, Tx } from '../../../db/index.ts';
import { withTenant } from '../../../db/index.ts';
import { notFound } from '../../../shared/errors.ts';
import { prefixedId } from '../../../shared/ids.ts';
import { seconds, type ResourceDeps } from '../deps.ts';
import { cursorPage, deletedObject, findOr404, type CursorPage, type CursorQuery } from '../../crud/index.ts';
import { deleteTemplateRow, insertTemplate, selectTemplate, selectTemplateSecrets, selectTemplates, updateTemplateRow } from './environments.repo.ts';
import { openJson, sealJson } from '../secret-box.ts';
import type { TemplateInput } from './environment.schema.ts';
import { applyHosted, emptySecrets, emptySpec, type HostedSecrets, type HostedSpec } from './hosted-spec.ts';

/**
 * Environment templates (`environments.templates`): reusable hosted-environment configurations. Update replaces
 * each field present (`name: null` clears it). Responses never carry `env`, `setup_commands` or inline contents.
 */
export interface EnvironmentTemplate {
  id: string;
  capability_directories: string[];
  created_at: number;
  files: Array<{ type: 'file_id'; file_id: string; path: string } | { type: 'inline'; path: string; size_bytes: number }>;
  name: string | null;
  network: HostedSpec['network'];
  object: 'agent.environment.template';
  packages: HostedSpec['packages'];
  plugins: Array<{ type: 'inline'; name: string; description: string }>;
  skills: Array<{ type: 'skill_reference'; skill_id: string; version: string | null } | { type: 'inline'; name: string; description: string }>;
  updated_at: number;
}

type Row = { id: string; name: string | null; spec: Record<string, unknown>; created_at: Date; updated_at: Date };
const aad = (tenantId: string, id: string) => `environment_templates:${tenantId}:${id}`;

function toTemplate(r: Row): EnvironmentTemplate {
  const spec = r.spec as unknown as HostedSpec;
  return {
    id: r.id,
    capability_directories: spec.capability_directories,
    created_at: seconds(r.created_at),
    files: spec.files.map((f) => (f.type === 'file_id' ? { type: f.type, file_id: f.file_id, path: f.path } : { type: f.type, path: f.path, size_bytes: f.size_bytes })),
    name: r.name,
    network: spec.network,
    object: 'agent.environment.template',
    packages: spec.packages,
    plugins: spec.plugins.map((p) => ({ type: p.type, name: p.name, description: p.description })),
    skills: spec.skills.map((s) => (s.type === 'skill_reference' ? { type: s.type, skill_id: s.skill_id, version: s.version } : { type: s.type, name: s.name, description: s.description })),
    updated_at: seconds(r.updated_at),
  };
}

export async function createTemplate(deps: ResourceDeps, tenantId: string, input: TemplateInput): Promise<EnvironmentTemplate> {
  const id = prefixedId('envtpl');
  const row = await withTenant(deps.db, tenantId, async (tx) => {
    const { spec, secrets } = await applyHosted(tx, { spec: emptySpec(), secrets: emptySecrets() }, input);
    return insertTemplate(tx, { id, tenantId, name: input.name || null, spec, sealed: sealJson(deps.box, secrets, aad(tenantId, id)) });
  });
  return toTemplate(row);
}

/** A template's full stored configuration (secrets opened), for applying it to a new environment. */
export async function loadTemplate(deps: ResourceDeps, tx: Tx, tenantId: string, id: string): Promise<{ spec: HostedSpec; secrets: HostedSecrets } | undefined> {
  const row = await selectTemplateSecrets(tx, id);
  if (!row) return undefined;
  return { spec: row.spec as unknown as HostedSpec, secrets: row.sealed ? openJson<HostedSecrets>(deps.box, row.sealed, aad(tenantId, id)) : emptySecrets() };
}

export async function updateTemplate(deps: ResourceDeps, tenantId: string, id: string, input: TemplateInput): Promise<EnvironmentTemplate> {
  const row = await withTenant(deps.db, tenantId, async (tx) => {
    const current = await loadTemplate(deps, tx, tenantId, id);
    if (!current) throw noSuchTemplate(id);
    const { spec, secrets } = await applyHosted(tx, current, input);
    return updateTemplateRow(tx, id, { ...(input.name !== undefined ? { name: input.name || null } : {}), spec, sealed: sealJson(deps.box, secrets, aad(tenantId, id)) });
  });
  return toTemplate(row);
}

export async function getTemplate(db: Kysely<DB>, tenantId: string, id: string): Promise<EnvironmentTemplate> {
  return toTemplate(await findOr404(withTenant(db, tenantId, (tx) => selectTemplate(tx, id)), () => noSuchTemplate(id)));
}

export async function listTemplates(db: Kysely<DB>, tenantId: string, cursor: CursorQuery): Promise<CursorPage<EnvironmentTemplate>> {
  const rows = await withTenant(db, tenantId, (tx) => selectTemplates(tx, cursor));
  return cursorPage(rows.map(toTemplate), cursor.limit);
}

export async function deleteTemplate(db: Kysely<DB>, tenantId: string, id: string) {
  await findOr404(withTenant(db, tenantId, (tx) => deleteTemplateRow(tx, id)), () => noSuchTemplate(id));
  return deletedObject(id, 'agent.environment.template.deleted');
}

function noSuchTemplate(id: string) {
  return notFound(`No such environment template: ${id}`);
}
