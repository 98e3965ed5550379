import { sql, type Kysely } from 'kysely';
import type { DB, Tx } from '../../../db/index.ts';
import { withTenant } from '../../../db/index.ts';
import { badRequest, notFound } from '../../../shared/errors.ts';
import { prefixedId } from '../../../shared/ids.ts';
import { seconds } from '../deps.ts';
import { keysetRows } from '../../crud/index.ts';
import { cursorPage, type CursorPage, type CursorQuery } from '../../crud/index.ts';
import { inspectSkill, zipSkill, type SkillFile } from './skill-archive.ts';

/**
 * Skills (`client.skills`) and their immutable, numbered versions. A skill's name and description are those of its
 * default version. Version numbers only grow (a deleted number is never reused); `latest_version` is the highest
 * remaining. The default version cannot be deleted (400 naming `version`): point `default_version` elsewhere first,
 * or delete the whole skill.
 */
export interface Skill {
  id: string;
  created_at: number;
  default_version: string;
  description: string;
  latest_version: string;
  name: string;
  object: 'skill';
}

export interface SkillVersion {
  id: string;
  created_at: number;
  description: string;
  name: string;
  object: 'skill.version';
  skill_id: string;
  version: string;
}

type SkillRow = { id: string; created_at: Date; default_version: number; latest_version: number; name: string; description: string };
type VersionRow = { id: string; skill_id: string; version: number; name: string; description: string; created_at: Date };

const toSkill = (r: SkillRow): Skill => ({
  id: r.id,
  created_at: seconds(r.created_at),
  default_version: String(r.default_version),
  description: r.description,
  latest_version: String(r.latest_version),
  name: r.name,
  object: 'skill',
});

const toVersion = (r: VersionRow): SkillVersion => ({
  id: r.id,
  created_at: seconds(r.created_at),
  description: r.description,
  name: r.name,
  object: 'skill.version',
  skill_id: r.skill_id,
  version: String(r.version),
});

const VERSION_COLUMNS = ['id', 'skill_id', 'version', 'name', 'description', 'created_at'] as const;

/** Skills with the name and description of their default version (correlated, so the page query stays on one table). */
function skillsQuery(tx: Tx) {
  const ofDefault = (column: 'name' | 'description') =>
    sql<string>`(select v.${sql.ref(column)} from agent_skill_versions as v where v.skill_id = agent_skills.id and v.version = agent_skills.default_version)`;
  return tx.selectFrom('agent_skills').select(['id', 'created_at', 'default_version', 'latest_version', ofDefault('name').as('name'), ofDefault('description').as('description')]);
}

async function findSkill(tx: Tx, id: string): Promise<Skill> {
  const row = await skillsQuery(tx).where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound(`No such skill: ${id}`);
  return toSkill(row);
}

async function insertVersion(tx: Tx, tenantId: string, skillId: string, version: number, files: SkillFile[], now: Date): Promise<VersionRow> {
  const manifest = inspectSkill(files);
  return tx
    .insertInto('agent_skill_versions')
    .values({ id: prefixedId('skillver'), tenant_id: tenantId, skill_id: skillId, version, name: manifest.name, description: manifest.description, archive: zipSkill(files, now), created_at: now })
    .returning(VERSION_COLUMNS)
    .executeTakeFirstOrThrow();
}

export async function createSkill(db: Kysely<DB>, tenantId: string, files: SkillFile[]): Promise<Skill> {
  inspectSkill(files); // validate before opening a transaction
  const now = new Date();
  return withTenant(db, tenantId, async (tx) => {
    const id = prefixedId('skill');
    await tx.insertInto('agent_skills').values({ id, tenant_id: tenantId, default_version: 1, latest_version: 1, next_version: 2, created_at: now }).execute();
    await insertVersion(tx, tenantId, id, 1, files, now);
    return findSkill(tx, id);
  });
}

export const getSkill = (db: Kysely<DB>, tenantId: string, id: string) => withTenant(db, tenantId, (tx) => findSkill(tx, id));

export async function listSkills(db: Kysely<DB>, tenantId: string, cursor: CursorQuery): Promise<CursorPage<Skill>> {
  const rows = await withTenant(db, tenantId, (tx) => keysetRows(skillsQuery(tx), 'agent_skills', cursor));
  return cursorPage(rows.map(toSkill), cursor.limit);
}

export async function deleteSkill(db: Kysely<DB>, tenantId: string, id: string): Promise<{ id: string; deleted: true; object: 'skill.deleted' }> {
  const gone = await withTenant(db, tenantId, (tx) => tx.deleteFrom('agent_skills').where('id', '=', id).returning('id').executeTakeFirst());
  if (!gone) throw notFound(`No such skill: ${id}`);
  return { id, deleted: true, object: 'skill.deleted' };
}

export async function setDefaultVersion(db: Kysely<DB>, tenantId: string, id: string, version: string): Promise<Skill> {
  const n = parseVersion(version, 'default_version');
  return withTenant(db, tenantId, async (tx) => {
    await findSkill(tx, id);
    const exists = await tx.selectFrom('agent_skill_versions').select('id').where('skill_id', '=', id).where('version', '=', n).executeTakeFirst();
    if (!exists) throw badRequest(`default_version: skill ${id} has no version ${version}`);
    await tx.updateTable('agent_skills').set({ default_version: n }).where('id', '=', id).execute();
    return findSkill(tx, id);
  });
}

export async function createVersion(db: Kysely<DB>, tenantId: string, skillId: string, files: SkillFile[], makeDefault: boolean): Promise<SkillVersion> {
  inspectSkill(files);
  const now = new Date();
  return withTenant(db, tenantId, async (tx) => {
    const skill = await tx.selectFrom('agent_skills').select(['next_version']).where('id', '=', skillId).forUpdate().executeTakeFirst();
    if (!skill) throw notFound(`No such skill: ${skillId}`);
    const version = skill.next_version;
    const row = await insertVersion(tx, tenantId, skillId, version, files, now);
    await tx
      .updateTable('agent_skills')
      .set({ next_version: version + 1, latest_version: version, ...(makeDefault ? { default_version: version } : {}) })
      .where('id', '=', skillId)
      .execute();
    return toVersion(row);
  });
}

/** `version` is a number or `latest`; `default` resolves to the skill's default version. */
async function resolveVersion(tx: Tx, skillId: string, version: string): Promise<number> {
  const skill = await tx.selectFrom('agent_skills').select(['default_version', 'latest_version']).where('id', '=', skillId).executeTakeFirst();
  if (!skill) throw notFound(`No such skill: ${skillId}`);
  if (version === 'latest') return skill.latest_version;
  if (version === 'default') return skill.default_version;
  const n = Number(version);
  if (!/^[1-9][0-9]{0,8}$/.test(version)) throw notFound(`No such version ${version} of skill ${skillId}`);
  return n;
}

async function findVersionRow(tx: Tx, skillId: string, version: string): Promise<VersionRow> {
  const n = await resolveVersion(tx, skillId, version);
  const row = await tx.selectFrom('agent_skill_versions').select(VERSION_COLUMNS).where('skill_id', '=', skillId).where('version', '=', n).executeTakeFirst();
  if (!row) throw notFound(`No such version ${version} of skill ${skillId}`);
  return row;
}

export async function getVersion(db: Kysely<DB>, tenantId: string, skillId: string, version: string): Promise<SkillVersion> {
  return toVersion(await withTenant(db, tenantId, (tx) => findVersionRow(tx, skillId, version)));
}

export async function listVersions(db: Kysely<DB>, tenantId: string, skillId: string, cursor: CursorQuery): Promise<CursorPage<SkillVersion>> {
  const rows = await withTenant(db, tenantId, async (tx) => {
    await findSkill(tx, skillId);
    return keysetRows(tx.selectFrom('agent_skill_versions').select(VERSION_COLUMNS).where('skill_id', '=', skillId), 'agent_skill_versions', cursor, ['version', 'id']);
  });
  return cursorPage(rows.map(toVersion), cursor.limit);
}

export async function deleteVersion(db: Kysely<DB>, tenantId: string, skillId: string, version: string) {
  return withTenant(db, tenantId, async (tx) => {
    const row = await findVersionRow(tx, skillId, version);
    const skill = await tx.selectFrom('agent_skills').select(['default_version']).where('id', '=', skillId).forUpdate().executeTakeFirstOrThrow();
    if (skill.default_version === row.version) {
      throw badRequest(`version: version ${row.version} is the default version of skill ${skillId}; set another default_version first, or delete the skill`);
    }
    await tx.deleteFrom('agent_skill_versions').where('id', '=', row.id).execute();
    const latest = await tx.selectFrom('agent_skill_versions').select((eb) => eb.fn.max('version').as('v')).where('skill_id', '=', skillId).executeTakeFirstOrThrow();
    await tx.updateTable('agent_skills').set({ latest_version: Number(latest.v) }).where('id', '=', skillId).execute();
    return { id: row.id, deleted: true as const, object: 'skill.version.deleted' as const, version: String(row.version) };
  });
}

/** The zip of a version (`version` undefined: the default version) and a download name. */
export async function versionArchive(db: Kysely<DB>, tenantId: string, skillId: string, version = 'default'): Promise<{ filename: string; archive: Uint8Array }> {
  return withTenant(db, tenantId, async (tx) => {
    const row = await findVersionRow(tx, skillId, version);
    const { archive } = await tx.selectFrom('agent_skill_versions').select('archive').where('id', '=', row.id).executeTakeFirstOrThrow();
    return { filename: `${row.name}-v${row.version}.zip`, archive };
  });
}

function parseVersion(raw: string, param: string): number {
  if (!/^[1-9][0-9]{0,8}$/.test(raw)) throw badRequest(`${param}: expected a version number such as "1", received "${raw}"`);
  return Number(raw);
}
