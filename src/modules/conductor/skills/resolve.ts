import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { withTenant } from '../../../db/index.ts';
import type { SkillPayload } from '../../../contracts/worker.ts';
import { badRequest } from '../../../shared/errors.ts';
import { filesOf, skillsNamed } from './skills.repo.ts';

/**
 * A profile's `skills` names resolved from the tenant's catalog into the payloads the runner forwards to the worker
 * (`POST /runner/run` body `skills`), in the profile's order. Called by the conductor when it dispatches a run; a
 * name missing from the catalog (deleted since the profile was saved) is a 400 `unknown skill: <names>`, and so are
 * skill files over MAX_RUN_SKILL_BYTES in all. Packaged
 * skills (imported, platform) carry their files: each resource with its bytes (base64) and executable bit, which the
 * runner writes into the session before the worker starts (runner/runs/skill-files.ts).
 */
/** What one run may carry in skill files (each package is at most 16 MiB): the runner request stays bounded. */
export const MAX_RUN_SKILL_BYTES = 64 * 1024 * 1024;

export async function resolveSkills(db: Kysely<DB>, tenantId: string, names: readonly string[] | undefined): Promise<SkillPayload[]> {
  const wanted = [...new Set(names ?? [])];
  if (wanted.length === 0) return [];
  const [skills, files] = await withTenant(db, tenantId, async (tx) => [await skillsNamed(tx, wanted), await filesOf(tx, wanted)] as const);
  const found = new Map(skills.map((s) => [s.name, s]));
  const missing = wanted.filter((n) => !found.has(n));
  if (missing.length) throw badRequest(`unknown skill: ${missing.join(', ')}`);
  const bytes = [...files.values()].flat().reduce((n, f) => n + f.content.byteLength, 0);
  if (bytes > MAX_RUN_SKILL_BYTES) throw badRequest(`skills: the profile's skill files total ${bytes} bytes, over the ${MAX_RUN_SKILL_BYTES} a run carries`);
  return wanted.map((n) => {
    const s = found.get(n)!;
    const content = new Map((files.get(n) ?? []).map((f) => [f.path, f]));
    const resources = s.resources.map((r) => {
      const file = content.get(r.path);
      return file ? { ...r, executable: file.executable, content: Buffer.from(file.content).toString('base64') } : r;
    });
    return { name: s.name, description: s.description, body: s.body, resources };
  });
}
