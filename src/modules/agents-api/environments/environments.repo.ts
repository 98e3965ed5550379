import { sql } from 'kysely';
import type { Tx } from '../../../db/index.ts';
import { jsonb } from '../../../db/index.ts';
import type { EnvironmentStatus } from '../../../db/types.ts';
import { keysetRows, type CursorQuery } from '../../crud/index.ts';

/** SQL of `agent_environments`, their workspace files, and `environment_templates` (secrets arrive sealed). */
export async function insertEnvironment(tx: Tx, e: { id: string; tenantId: string; sessionId: string | null; spec: unknown; sealed: string; status: EnvironmentStatus }): Promise<void> {
  await tx
    .insertInto('agent_environments')
    .values({ id: e.id, tenant_id: e.tenantId, session_id: e.sessionId, type: 'openai_hosted', status: e.status, spec: jsonb(e.spec), sealed: e.sealed })
    .execute();
}

export async function setEnvironmentSpec(tx: Tx, id: string, spec: unknown): Promise<void> {
  await tx.updateTable('agent_environments').set({ spec: jsonb(spec) }).where('id', '=', id).execute();
}

export function selectEnvironment(tx: Tx, id: string) {
  return tx.selectFrom('agent_environments').select(['id', 'type', 'status', 'workspace_directory', 'spec']).where('id', '=', id).executeTakeFirst();
}

export async function setEnvironmentStatusRow(tx: Tx, id: string, status: EnvironmentStatus): Promise<void> {
  await tx.updateTable('agent_environments').set({ status, updated_at: new Date() }).where('id', '=', id).execute();
}

export function selectEnvironmentSecrets(tx: Tx, id: string) {
  return tx.selectFrom('agent_environments').select(['spec', 'sealed', 'workspace_directory', 'status', 'sandbox_mark']).where('id', '=', id).executeTakeFirst();
}

export async function setSandboxMark(tx: Tx, id: string, mark: string): Promise<void> {
  await tx.updateTable('agent_environments').set({ sandbox_mark: mark }).where('id', '=', id).execute();
}

export async function deleteEnvironmentRow(tx: Tx, id: string): Promise<void> {
  await tx.deleteFrom('agent_environments').where('id', '=', id).execute();
}

export async function upsertEnvironmentFile(tx: Tx, f: { tenantId: string; environmentId: string; path: string; content: Uint8Array; fileId: string | null }): Promise<void> {
  const { content, fileId } = f;
  await tx
    .insertInto('agent_environment_files')
    .values({ environment_id: f.environmentId, tenant_id: f.tenantId, path: f.path, content, size_bytes: content.byteLength, file_id: fileId, delivered: false })
    .onConflict((oc) => oc.columns(['environment_id', 'path']).doUpdateSet({ content, size_bytes: content.byteLength, file_id: fileId, delivered: false, updated_at: new Date() }))
    .execute();
}

/** Files not (or not in this version) in the session's sandbox yet, with their bytes, by path. */
export function undeliveredFiles(tx: Tx, environmentId: string) {
  return tx.selectFrom('agent_environment_files').select(['path', 'content']).where('environment_id', '=', environmentId).where('delivered', '=', false).orderBy('path').execute();
}

/** Marks a file delivered, unless it changed since (its bytes are no longer `sha256`). */
export async function markDelivered(tx: Tx, environmentId: string, path: string, sha256: Uint8Array): Promise<void> {
  await tx
    .updateTable('agent_environment_files')
    .set({ delivered: true })
    .where('environment_id', '=', environmentId)
    .where('path', '=', path)
    .where(sql<boolean>`sha256(content) = ${sha256}`)
    .execute();
}

/** Every file is to be delivered again (the sandbox lost them). */
export async function markAllUndelivered(tx: Tx, environmentId: string): Promise<void> {
  await tx.updateTable('agent_environment_files').set({ delivered: false }).where('environment_id', '=', environmentId).execute();
}

/** Workspace files with their bytes, by path. */
export function environmentFiles(tx: Tx, environmentId: string) {
  return tx.selectFrom('agent_environment_files').select(['path', 'content']).where('environment_id', '=', environmentId).orderBy('path').execute();
}

/** Workspace file paths and sizes (no bytes), unordered. */
export function environmentFileSizes(tx: Tx, environmentId: string) {
  return tx.selectFrom('agent_environment_files').select(['path', 'size_bytes']).where('environment_id', '=', environmentId).execute();
}

export const TEMPLATE_COLUMNS = ['id', 'name', 'spec', 'created_at', 'updated_at'] as const;

export function insertTemplate(tx: Tx, t: { id: string; tenantId: string; name: string | null; spec: unknown; sealed: string }) {
  return tx.insertInto('environment_templates').values({ id: t.id, tenant_id: t.tenantId, name: t.name, spec: jsonb(t.spec), sealed: t.sealed }).returning(TEMPLATE_COLUMNS).executeTakeFirstOrThrow();
}

export function selectTemplateSecrets(tx: Tx, id: string) {
  return tx.selectFrom('environment_templates').select(['spec', 'sealed']).where('id', '=', id).executeTakeFirst();
}

export function updateTemplateRow(tx: Tx, id: string, t: { name?: string | null; spec: unknown; sealed: string }) {
  return tx
    .updateTable('environment_templates')
    .set({ ...(t.name !== undefined ? { name: t.name } : {}), spec: jsonb(t.spec), sealed: t.sealed, updated_at: new Date() })
    .where('id', '=', id)
    .returning(TEMPLATE_COLUMNS)
    .executeTakeFirstOrThrow();
}

export function selectTemplate(tx: Tx, id: string) {
  return tx.selectFrom('environment_templates').select(TEMPLATE_COLUMNS).where('id', '=', id).executeTakeFirst();
}

export function selectTemplates(tx: Tx, cursor: CursorQuery) {
  return keysetRows(tx.selectFrom('environment_templates').select(TEMPLATE_COLUMNS), 'environment_templates', cursor);
}

export async function deleteTemplateRow(tx: Tx, id: string): Promise<boolean> {
  return (await tx.deleteFrom('environment_templates').where('id', '=', id).returning('id').executeTakeFirst()) !== undefined;
}

/** A skill of the agents API's catalog and its default and latest versions (for environment skill references). */
export function skillVersions(tx: Tx, skillId: string) {
  return tx.selectFrom('agent_skills').select(['id', 'default_version', 'latest_version']).where('id', '=', skillId).executeTakeFirst();
}

export function skillVersionInfo(tx: Tx, skillId: string, version: number) {
  return tx.selectFrom('agent_skill_versions').select(['id', 'name', 'description', 'version']).where('skill_id', '=', skillId).where('version', '=', version).executeTakeFirst();
}

/** The zip of one version of a skill (what an environment's skill reference installs); undefined when it is gone. */
export async function skillVersionArchive(tx: Tx, skillId: string, version: number): Promise<Uint8Array | undefined> {
  return (await tx.selectFrom('agent_skill_versions').select('archive').where('skill_id', '=', skillId).where('version', '=', version).executeTakeFirst())?.archive;
}
