import { createHash } from 'node:crypto';
import { lstat, readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { Kysely } from 'kysely';
import { withOperator, withTenant, type DB } from '../../../db/index.ts';
import type { Logger } from '../../../shared/log.ts';
import { readPackage, type PackageEntry, type SkillPackage } from './skill-package.ts';
import { filesOfPackage, skillOfPackage } from './skill-import.service.ts';
import { insertSkillRow, liveTenantIds, markSeeded, replacePlatformSkill, skillsNamed, tombstoned, type SkillFile } from './skills.repo.ts';

/**
 * Platform skills: the folders under `skills/` at the repository root ship with the server and are seeded into every
 * tenant's catalog at boot (source `platform`). A tenant that deleted one has a tombstone, and seeding skips it; a
 * newer shipped copy replaces an older platform copy in place; a user or imported skill of the same name is left alone.
 */
export { PLATFORM_SKILLS_DIR } from '../../../shared/package-root.ts';

export interface PlatformSkill {
  pkg: SkillPackage;
  files: SkillFile[];
}

/** Reads one folder as upload entries (links kept as links, so validation refuses them as it would an upload). */
export async function folderEntries(dir: string): Promise<PackageEntry[]> {
  const out: PackageEntry[] = [];
  const walk = async (at: string): Promise<void> => {
    for (const entry of await readdir(at, { withFileTypes: true })) {
      const full = join(at, entry.name);
      const path = relative(dir, full).split(sep).join('/');
      const st = await lstat(full);
      if (st.isSymbolicLink()) out.push({ path, bytes: new Uint8Array(), executable: false, link: true });
      else if (st.isDirectory()) await walk(full);
      else if (st.isFile()) out.push({ path, bytes: new Uint8Array(await readFile(full)), executable: (st.mode & 0o111) !== 0, link: false });
    }
  };
  await walk(dir);
  return out;
}

/** Bumped when seeding writes platform skills differently: every tenant is seeded again once. */
const SEEDING_FORMAT = '1';

/**
 * A fingerprint of the shipped skills (every file's path, kind and bytes, and the seeding format), read without parsing
 * a package: a tenant seeded with the same fingerprint holds them already.
 */
export async function platformFingerprint(dir: string): Promise<string> {
  const hash = createHash('sha256').update(SEEDING_FORMAT);
  const folders = (await readdir(dir, { withFileTypes: true }).catch(() => [])).filter((d) => d.isDirectory()).map((d) => d.name);
  for (const folder of folders.sort()) {
    const entries = (await folderEntries(join(dir, folder))).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    for (const e of entries) hash.update(`\0${folder}/${e.path}\0${e.link ? 'link' : e.executable ? 'exec' : 'file'}\0${e.bytes.length}\0`).update(e.bytes);
  }
  return hash.digest('base64url');
}

export async function loadPlatformSkills(dir: string, log: Logger): Promise<PlatformSkill[]> {
  const folders = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const out: PlatformSkill[] = [];
  for (const f of folders.filter((d) => d.isDirectory()).sort((a, b) => a.name.localeCompare(b.name))) {
    const entries = await folderEntries(join(dir, f.name));
    const pkg = await readPackage(entries);
    if (!pkg.validation.ok) {
      log.error('platform skill skipped: invalid package', { folder: f.name, errors: pkg.validation.errors.map((e) => e.message) });
      continue;
    }
    out.push({ pkg, files: filesOfPackage(pkg, entries) });
  }
  return out;
}

type Comparable = { body: string; description: string; resources: Array<{ path: string; sha256: string; executable?: boolean }> };
const contentKey = (s: Comparable) => JSON.stringify([s.body, s.description, s.resources.map((r) => [r.path, r.sha256, r.executable ?? false]).sort()]);
const sameContent = (a: Comparable, b: Comparable) => contentKey(a) === contentKey(b);

/**
 * Seeds every live tenant (or the given ones); answers how many skills were written. With the skills' `fingerprint`,
 * each tenant seeded records it (platformFingerprint).
 */
export async function seedPlatformSkills(db: Kysely<DB>, skills: readonly PlatformSkill[], tenants?: readonly string[], fingerprint?: string): Promise<number> {
  if (skills.length === 0 && !fingerprint) return 0;
  const ids = tenants ?? (await withOperator(db, liveTenantIds));
  let written = 0;
  for (const tenantId of ids) {
    written += await withTenant(db, tenantId, async (tx) => {
      const gone = await tombstoned(tx);
      const existing = new Map((await skillsNamed(tx, skills.map((s) => s.pkg.skill.name))).map((s) => [s.name, s]));
      let n = 0;
      for (const { pkg, files } of skills) {
        if (gone.has(pkg.skill.name)) continue;
        const row = skillOfPackage(pkg, 'platform');
        const have = existing.get(pkg.skill.name);
        if (!have) n += (await insertSkillRow(tx, tenantId, row, files)) ? 1 : 0;
        else if (have.source === 'platform' && !sameContent(have, row)) n += (await replacePlatformSkill(tx, tenantId, row, files)) ? 1 : 0;
      }
      if (fingerprint) await markSeeded(tx, tenantId, fingerprint);
      return n;
    });
  }
  return written;
}
