import { sql } from 'kysely';
import type { Tx } from '../../../db/index.ts';
import { jsonb } from '../../../db/json.ts';
import type { SkillPackage } from './skill-package.ts';
import type { SkillFile } from './skills.repo.ts';

/**
 * SQL for staged imports (`skill_imports`, `skill_import_files`, sql/0016): a dry run's package waits here until it
 * is committed or expires. PostgreSQL, not memory: the dry run and the commit may reach two conductors.
 */
export async function stageImport(tx: Tx, row: { id: string; tenantId: string; pkg: SkillPackage; expiresAt: Date }, files: readonly SkillFile[]): Promise<void> {
  await tx.deleteFrom('skill_imports').where('expires_at', '<=', sql<Date>`now()`).execute();
  await tx.insertInto('skill_imports').values({ id: row.id, tenant_id: row.tenantId, package: jsonb(row.pkg), expires_at: row.expiresAt }).execute();
  for (let i = 0; i < files.length; i += 50) {
    const batch = files.slice(i, i + 50).map((f) => ({ import_id: row.id, tenant_id: row.tenantId, path: f.path, content: f.content, executable: f.executable }));
    await tx.insertInto('skill_import_files').values(batch).execute();
  }
}

/** Takes a live staged import (locks it, reads its files, deletes it); undefined when unknown, used or expired. */
export async function takeImport(tx: Tx, id: string): Promise<{ pkg: SkillPackage; files: SkillFile[] } | undefined> {
  const row = await tx.selectFrom('skill_imports').select('package').where('id', '=', id).where('expires_at', '>', sql<Date>`now()`).forUpdate().executeTakeFirst();
  if (!row) return undefined;
  const files = await tx.selectFrom('skill_import_files').select(['path', 'content', 'executable']).where('import_id', '=', id).orderBy('path').execute();
  await tx.deleteFrom('skill_imports').where('id', '=', id).execute();
  return { pkg: row.package as unknown as SkillPackage, files };
}
