import type { Context } from 'hono';
import { readZip, UPLOAD_ARCHIVE_LIMITS } from '../../../shared/archive/index.ts';
import { badRequest } from '../../../shared/errors.ts';
import { MAX_FILE_BYTES, MAX_FILES, MAX_PACKAGE_BYTES, withinFolder, type PackageEntry } from './skill-package.ts';

/**
 * The multipart body of `POST /api/skills/import`: every file part is one file of the skill folder, its filename the
 * package-relative name (`SKILL.md`, `scripts/run.sh`); repeated text fields `executable` name the files that carry
 * the executable bit (multipart has no file modes); a part of type `inode/symlink` is a symbolic link (refused by
 * validation, so the dry run can say which one). Names that all start with the skill's folder (`my-skill/SKILL.md`)
 * are taken relative to it. Or one part holding a zip of the folder (named `*.zip`, or starting with a zip's
 * signature): read by the archive module under the package's own limits, execute bits taken from the zip. Read with
 * the platform's own FormData parser.
 */
export const SYMLINK_TYPE = 'inode/symlink';

const ZIP_MAGIC = [0x50, 0x4b, 0x03, 0x04];
const PACKAGE_LIMITS = { ...UPLOAD_ARCHIVE_LIMITS, totalBytes: MAX_PACKAGE_BYTES, entryBytes: MAX_FILE_BYTES, entries: MAX_FILES };

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
  if (files.length === 1) {
    const bytes = new Uint8Array(await files[0].arrayBuffer());
    if (files[0].name.toLowerCase().endsWith('.zip') || ZIP_MAGIC.every((b, i) => bytes[i] === b)) {
      const unpacked = await readZip(bytes, { field: 'body', limits: PACKAGE_LIMITS });
      const kept = unpacked.filter((f) => !f.path.startsWith('__MACOSX/'));
      return withinFolder(kept.map((f) => ({ path: f.path, bytes: f.content, executable: f.executable, link: false })));
    }
  }
  const entries: PackageEntry[] = [];
  for (const f of files) {
    entries.push({ path: f.name, bytes: new Uint8Array(await f.arrayBuffer()), executable: executable.has(f.name), link: f.type === SYMLINK_TYPE });
  }
  return withinFolder(entries);
}
