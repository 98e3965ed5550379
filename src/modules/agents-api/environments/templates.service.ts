import type { Kysely } from 'kysely';
import type { DB, Tx } from '../../../db/index.ts';
import { jsonb, withTenant } from '../../../db/index.ts';
import { notFound } from '../../../shared/errors.ts';
import { prefixedId } from '../../../shared/ids.ts';
import { seconds, type ResourceDeps } from '../deps.ts';
import { keysetRows } from '../../crud/index.ts';
import { cursorPage, type CursorPage, type CursorQuery } from '../../crud/index.ts';
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
const COLUMNS = ['id', 'name', 'spec', 'created_at', 'updated_at'] as const;
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
    return tx
      .insertInto('environment_templates')
      .values({ id, tenant_id: tenantId, name: input.name || null, spec: jsonb(spec), sealed: sealJson(deps.box, secrets, aad(tenantId, id)) })
      .returning(COLUMNS)
      .executeTakeFirstOrThrow();
  });
  return toTemplate(row);
}

/** A template's full stored configuration (secrets opened), for applying it to a new environment. */
export async function loadTemplate(deps: ResourceDeps, tx: Tx, tenantId: string, id: string): Promise<{ spec: HostedSpec; secrets: HostedSecrets } | undefined> {
  const row = await tx.selectFrom('environment_templates').select(['spec', 'sealed']).where('id', '=', id).executeTakeFirst();
  if (!row) return undefined;
  return { spec: row.spec as unknown as HostedSpec, secrets: row.sealed ? openJson<HostedSecrets>(deps.box, row.sealed, aad(tenantId, id)) : emptySecrets() };
}

export async function updateTemplate(deps: ResourceDeps, tenantId: string, id: string, input: TemplateInput): Promise<EnvironmentTemplate> {
  const row = await withTenant(deps.db, tenantId, async (tx) => {
    const current = await loadTemplate(deps, tx, tenantId, id);
    if (!current) throw noSuchTemplate(id);
    const { spec, secrets } = await applyHosted(tx, current, input);
    return tx
      .updateTable('environment_templates')
      .set({
        ...(input.name !== undefined ? { name: input.name || null } : {}),
        spec: jsonb(spec),
        sealed: sealJson(deps.box, secrets, aad(tenantId, id)),
        updated_at: new Date(),
      })
      .where('id', '=', id)
      .returning(COLUMNS)
      .executeTakeFirstOrThrow();
  });
  return toTemplate(row);
}

export async function getTemplate(db: Kysely<DB>, tenantId: string, id: string): Promise<EnvironmentTemplate> {
  const row = await withTenant(db, tenantId, (tx) => tx.selectFrom('environment_templates').select(COLUMNS).where('id', '=', id).executeTakeFirst());
  if (!row) throw noSuchTemplate(id);
  return toTemplate(row);
}

export async function listTemplates(db: Kysely<DB>, tenantId: string, cursor: CursorQuery): Promise<CursorPage<EnvironmentTemplate>> {
  const rows = await withTenant(db, tenantId, (tx) => keysetRows(tx.selectFrom('environment_templates').select(COLUMNS), 'environment_templates', cursor));
  return cursorPage(rows.map(toTemplate), cursor.limit);
}

export async function deleteTemplate(db: Kysely<DB>, tenantId: string, id: string) {
  const gone = await withTenant(db, tenantId, (tx) => tx.deleteFrom('environment_templates').where('id', '=', id).returning('id').executeTakeFirst());
  if (!gone) throw noSuchTemplate(id);
  return { id, deleted: true as const, object: 'agent.environment.template.deleted' as const };
}

function noSuchTemplate(id: string) {
  return notFound(`No such environment template: ${id}`);
}
