import { sql } from 'kysely';
import type { Tx } from '../../../db/index.ts';
import { keysetRows, type CursorQuery } from '../../crud/index.ts';

/** SQL of `agent_skills` and their numbered `agent_skill_versions` (archives are zip bytes). */
export const VERSION_COLUMNS = ['id', 'skill_id', 'version', 'name', 'description', 'created_at'] as const;

/** Skills with the name and description of their default version (correlated, so the page query stays on one table). */
function skillsQuery(tx: Tx) {
  const ofDefault = (column: 'name' | 'description') =>
    sql<string>`(select v.${sql.ref(column)} from agent_skill_versions as v where v.skill_id = agent_skills.id and v.version = agent_skills.default_version)`;
  return tx.selectFrom('agent_skills').select(['id', 'created_at', 'default_version', 'latest_version', ofDefault('name').as('name'), ofDefault('description').as('description')]);
}

export function selectSkill(tx: Tx, id: string) {
  return skillsQuery(tx).where('id', '=', id).executeTakeFirst();
}

export function selectSkills(tx: Tx, cursor: CursorQuery) {
  return keysetRows(skillsQuery(tx), 'agent_skills', cursor);
}

export async function insertSkillRow(tx: Tx, s: { id: string; tenantId: string; createdAt: Date }): Promise<void> {
  await tx.insertInto('agent_skills').values({ id: s.id, tenant_id: s.tenantId, default_version: 1, latest_version: 1, next_version: 2, created_at: s.createdAt }).execute();
}

export function insertVersionRow(tx: Tx, v: { id: string; tenantId: string; skillId: string; version: number; name: string; description: string; archive: Uint8Array; createdAt: Date }) {
  return tx
    .insertInto('agent_skill_versions')
    .values({ id: v.id, tenant_id: v.tenantId, skill_id: v.skillId, version: v.version, name: v.name, description: v.description, archive: v.archive, created_at: v.createdAt })
    .returning(VERSION_COLUMNS)
    .executeTakeFirstOrThrow();
}

export async function deleteSkillRow(tx: Tx, id: string): Promise<boolean> {
  return (await tx.deleteFrom('agent_skills').where('id', '=', id).returning('id').executeTakeFirst()) !== undefined;
}

export async function versionExists(tx: Tx, skillId: string, version: number): Promise<boolean> {
  return (await tx.selectFrom('agent_skill_versions').select('id').where('skill_id', '=', skillId).where('version', '=', version).executeTakeFirst()) !== undefined;
}

export async function setSkillDefault(tx: Tx, id: string, version: number): Promise<void> {
  await tx.updateTable('agent_skills').set({ default_version: version }).where('id', '=', id).execute();
}

/** The skill's version counters, locked for a new version or a deletion. */
export function lockSkill(tx: Tx, id: string) {
  return tx.selectFrom('agent_skills').select(['next_version', 'default_version']).where('id', '=', id).forUpdate().executeTakeFirst();
}

export async function recordNewVersion(tx: Tx, skillId: string, version: number, makeDefault: boolean): Promise<void> {
  await tx
    .updateTable('agent_skills')
    .set({ next_version: version + 1, latest_version: version, ...(makeDefault ? { default_version: version } : {}) })
    .where('id', '=', skillId)
    .execute();
}

export function skillVersionNumbers(tx: Tx, skillId: string) {
  return tx.selectFrom('agent_skills').select(['default_version', 'latest_version']).where('id', '=', skillId).executeTakeFirst();
}

export function selectVersion(tx: Tx, skillId: string, version: number) {
  return tx.selectFrom('agent_skill_versions').select(VERSION_COLUMNS).where('skill_id', '=', skillId).where('version', '=', version).executeTakeFirst();
}

export function selectVersions(tx: Tx, skillId: string, cursor: CursorQuery) {
  return keysetRows(tx.selectFrom('agent_skill_versions').select(VERSION_COLUMNS).where('skill_id', '=', skillId), 'agent_skill_versions', cursor, ['version', 'id']);
}

/** Deletes a version and sets the skill's `latest_version` to the highest remaining. */
export async function deleteVersionRow(tx: Tx, skillId: string, versionId: string): Promise<void> {
  await tx.deleteFrom('agent_skill_versions').where('id', '=', versionId).execute();
  const latest = await tx.selectFrom('agent_skill_versions').select((eb) => eb.fn.max('version').as('v')).where('skill_id', '=', skillId).executeTakeFirstOrThrow();
  await tx.updateTable('agent_skills').set({ latest_version: Number(latest.v) }).where('id', '=', skillId).execute();
}

export async function versionArchiveBytes(tx: Tx, versionId: string): Promise<Uint8Array> {
  return (await tx.selectFrom('agent_skill_versions').select('archive').where('id', '=', versionId).executeTakeFirstOrThrow()).archive;
}
