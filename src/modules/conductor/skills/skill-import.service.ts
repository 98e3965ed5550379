import type { Kysely } from 'kysely';
import { withTenant, type DB } from '../../../db/index.ts';
import { AppError, conflict, notFound } from '../../../shared/errors.ts';
import { prefixedId } from '../../../shared/ids.ts';
import { readPackage, type PackageEntry, type SkillPackage } from './skill-package.ts';
import type { Skill, SkillSource } from './skill.schema.ts';
import { stageImport, takeImport } from './skill-imports.repo.ts';
import { insertSkillRow, knownSkillNames, type NewSkill, type SkillFile } from './skills.repo.ts';

/**
 * Staged skill import: `dryRun` validates one skill folder and keeps it under a short-lived staging id; `commit`
 * registers it (source `imported`). A package that fails validation is answered 400 with the whole dry run and is
 * not staged; nothing is written to the catalog before the commit.
 */
export const STAGING_TTL_MS = 15 * 60_000;

export interface DryRun extends SkillPackage {
  stagingId: string | null;
  expiresAt: string | null;
}

export const filesOfPackage = (pkg: SkillPackage, entries: readonly PackageEntry[]): SkillFile[] => {
  const wanted = new Set(pkg.resources.map((r) => r.path));
  return entries.filter((e) => wanted.has(e.path)).map((e) => ({ path: e.path, content: e.bytes, executable: e.executable }));
};

/** The catalog row of a package (`imported` or `platform`). */
export function skillOfPackage(pkg: SkillPackage, source: SkillSource): NewSkill {
  return {
    ...pkg.skill,
    body: pkg.body,
    source,
    resources: pkg.resources.map((r) => ({ path: r.path, contentType: r.contentType, sha256: r.sha256, size: r.bytes, executable: r.executable })),
    requiresSandbox: pkg.requiresSandbox,
    totalBytes: pkg.totalBytes,
  };
}

export async function dryRun(db: Kysely<DB>, tenantId: string, entries: readonly PackageEntry[], now = new Date()): Promise<DryRun> {
  const pkg = await readPackage(entries);
  if (pkg.validation.ok) {
    const taken = await withTenant(db, tenantId, (tx) => knownSkillNames(tx, [pkg.skill.name]));
    if (taken.length) pkg.validation.errors.push({ code: 'name_taken', path: 'SKILL.md', message: `SKILL.md: a skill named ${pkg.skill.name} already exists; delete it first or rename this one` });
    pkg.validation.ok = pkg.validation.errors.length === 0;
  }
  if (!pkg.validation.ok) {
    const summary = pkg.validation.errors.map((e) => e.message).join('; ');
    throw new AppError(400, `skill package refused: ${summary}`, { extra: { stagingId: null, expiresAt: null, ...pkg } });
  }
  const id = prefixedId('stg');
  const expiresAt = new Date(now.getTime() + STAGING_TTL_MS);
  await withTenant(db, tenantId, (tx) => stageImport(tx, { id, tenantId, pkg, expiresAt }, filesOfPackage(pkg, entries)));
  return { stagingId: id, expiresAt: expiresAt.toISOString(), ...pkg };
}

export async function commitImport(db: Kysely<DB>, tenantId: string, stagingId: string): Promise<Skill> {
  return withTenant(db, tenantId, async (tx) => {
    const staged = await takeImport(tx, stagingId);
    if (!staged) throw notFound(`unknown staging id: ${stagingId} (expired, already committed, or never staged)`);
    const skill = await insertSkillRow(tx, tenantId, skillOfPackage(staged.pkg, 'imported'), staged.files);
    if (!skill) throw conflict(`skill ${staged.pkg.skill.name} already exists`);
    return skill;
  });
}
