import type { Kysely } from 'kysely';
import type { DB, Tx } from '../../../db/index.ts';
import { withTenant } from '../../../db/index.ts';
import { badRequest, notFound } from '../../../shared/errors.ts';
import { prefixedId } from '../../../shared/ids.ts';
import { seconds } from '../deps.ts';
import { cursorPage, deletedObject, found, type CursorPage, type CursorQuery } from '../../crud/index.ts';
import * as repo from './skills.repo.ts';
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

async function findSkill(tx: Tx, id: string): Promise<Skill> {
  return toSkill(found(await repo.selectSkill(tx, id), `No such skill: ${id}`));
}

async function insertVersion(tx: Tx, tenantId: string, skillId: string, version: number, files: SkillFile[], now: Date): Promise<VersionRow> {
  const manifest = await inspectSkill(files);
  return repo.insertVersionRow(tx, { id: prefixedId('skillver'), tenantId, skillId, version, name: manifest.name, description: manifest.description, archive: await zipSkill(files, now), createdAt: now });
}

export async function createSkill(db: Kysely<DB>, tenantId: string, files: SkillFile[]): Promise<Skill> {
  await inspectSkill(files); // validate before opening a transaction
  const now = new Date();
  return withTenant(db, tenantId, async (tx) => {
    const id = prefixedId('skill');
    await repo.insertSkillRow(tx, { id, tenantId, createdAt: now });
    await insertVersion(tx, tenantId, id, 1, files, now);
    return findSkill(tx, id);
  });
}

export const getSkill = (db: Kysely<DB>, tenantId: string, id: string) => withTenant(db, tenantId, (tx) => findSkill(tx, id));

export async function listSkills(db: Kysely<DB>, tenantId: string, cursor: CursorQuery): Promise<CursorPage<Skill>> {
  const rows = await withTenant(db, tenantId, (tx) => repo.selectSkills(tx, cursor));
  return cursorPage(rows.map(toSkill), cursor.limit);
}

export async function deleteSkill(db: Kysely<DB>, tenantId: string, id: string): Promise<{ id: string; deleted: true; object: 'skill.deleted' }> {
  found(await withTenant(db, tenantId, (tx) => repo.deleteSkillRow(tx, id)), `No such skill: ${id}`);
  return deletedObject(id, 'skill.deleted');
}

export async function setDefaultVersion(db: Kysely<DB>, tenantId: string, id: string, version: string): Promise<Skill> {
  const n = parseVersion(version, 'default_version');
  return withTenant(db, tenantId, async (tx) => {
    await findSkill(tx, id);
    if (!(await repo.versionExists(tx, id, n))) throw badRequest(`default_version: skill ${id} has no version ${version}`);
    await repo.setSkillDefault(tx, id, n);
    return findSkill(tx, id);
  });
}

export async function createVersion(db: Kysely<DB>, tenantId: string, skillId: string, files: SkillFile[], makeDefault: boolean): Promise<SkillVersion> {
  await inspectSkill(files);
  const now = new Date();
  return withTenant(db, tenantId, async (tx) => {
    const version = found(await repo.lockSkill(tx, skillId), `No such skill: ${skillId}`).next_version;
    const row = await insertVersion(tx, tenantId, skillId, version, files, now);
    await repo.recordNewVersion(tx, skillId, version, makeDefault);
    return toVersion(row);
  });
}

/** `version` is a number or `latest`; `default` resolves to the skill's default version. */
async function resolveVersion(tx: Tx, skillId: string, version: string): Promise<number> {
  const skill = found(await repo.skillVersionNumbers(tx, skillId), `No such skill: ${skillId}`);
  if (version === 'latest') return skill.latest_version;
  if (version === 'default') return skill.default_version;
  const n = Number(version);
  if (!/^[1-9][0-9]{0,8}$/.test(version)) throw notFound(`No such version ${version} of skill ${skillId}`);
  return n;
}

async function findVersionRow(tx: Tx, skillId: string, version: string): Promise<VersionRow> {
  const n = await resolveVersion(tx, skillId, version);
  return found(await repo.selectVersion(tx, skillId, n), `No such version ${version} of skill ${skillId}`);
}

export async function getVersion(db: Kysely<DB>, tenantId: string, skillId: string, version: string): Promise<SkillVersion> {
  return toVersion(await withTenant(db, tenantId, (tx) => findVersionRow(tx, skillId, version)));
}

export async function listVersions(db: Kysely<DB>, tenantId: string, skillId: string, cursor: CursorQuery): Promise<CursorPage<SkillVersion>> {
  const rows = await withTenant(db, tenantId, async (tx) => {
    await findSkill(tx, skillId);
    return repo.selectVersions(tx, skillId, cursor);
  });
  return cursorPage(rows.map(toVersion), cursor.limit);
}

export async function deleteVersion(db: Kysely<DB>, tenantId: string, skillId: string, version: string) {
  return withTenant(db, tenantId, async (tx) => {
    const row = await findVersionRow(tx, skillId, version);
    const skill = found(await repo.lockSkill(tx, skillId), `No such skill: ${skillId}`);
    if (skill.default_version === row.version) {
      throw badRequest(`version: version ${row.version} is the default version of skill ${skillId}; set another default_version first, or delete the skill`);
    }
    await repo.deleteVersionRow(tx, skillId, row.id);
    return { id: row.id, deleted: true as const, object: 'skill.version.deleted' as const, version: String(row.version) };
  });
}

/** The zip of a version (`version` undefined: the default version) and a download name. */
export async function versionArchive(db: Kysely<DB>, tenantId: string, skillId: string, version = 'default'): Promise<{ filename: string; archive: Uint8Array }> {
  return withTenant(db, tenantId, async (tx) => {
    const row = await findVersionRow(tx, skillId, version);
    const archive = await repo.versionArchiveBytes(tx, row.id);
    return { filename: `${row.name}-v${row.version}.zip`, archive };
  });
}

function parseVersion(raw: string, param: string): number {
  if (!/^[1-9][0-9]{0,8}$/.test(raw)) throw badRequest(`${param}: expected a version number such as "1", received "${raw}"`);
  return Number(raw);
}
