import type { Context } from 'hono';
import { badRequest } from '../../../shared/errors.ts';
import { withinFolder, type PackageEntry } from './skill-package.ts';

/**
 * The multipart body of `POST /api/skills/import`: every file part is one file of the skill folder, its filename the
 * package-relative name (`SKILL.md`, `scripts/run.sh`); repeated text fields `executable` name the files that carry
 * the executable bit (multipart has no file modes); a part of type `inode/symlink` is a symbolic link (refused by
 * validation, so the dry run can say which one). Names that all start with the skill's folder (`my-skill/SKILL.md`)
 * are taken relative to it. Read with the platform's own FormData parser.
 */
export const SYMLINK_TYPE = 'inode/symlink';

export async function readUpload(c: Context): Promise<PackageEntry[]> {
  if (!/^multipart\/form-data\b/i.test(c.req.header('content-type') ?? '')) {
    throw badRequest('body: expected multipart/form-data with one part per file of the skill folder');
  }
  let form: FormData;
  try {
    form = await c.req.formData();
  } catch {
    throw badRequest('body: malformed multipart/form-data');
  }
  const executable = new Set<string>();
  const files: File[] = [];
  for (const [name, value] of form.entries()) {
    if (typeof value !== 'string') files.push(value);
    else if (name === 'executable') executable.add(value);
    else throw badRequest(`${name}: unexpected text field (send files as file parts and "executable" fields naming executable files)`);
  }
  if (files.length === 0) throw badRequest('body: no files; upload the files of one skill folder, SKILL.md at its root');
  const entries: PackageEntry[] = [];
  for (const f of files) {
    entries.push({ path: f.name, bytes: new Uint8Array(await f.arrayBuffer()), executable: executable.has(f.name), link: f.type === SYMLINK_TYPE });
  }
  return withinFolder(entries);
}
