import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';

/**
 * A skill folder as the multipart body of `POST /api/skills/import`: one file part per file (its filename the path
 * relative to the folder, `/`-separated), an `executable` field per file with an execute bit, and symbolic links as
 * parts of type `inode/symlink` (the server refuses them by name in the dry run, so the user sees which). Used by
 * `svc skills import`.
 */
export const SYMLINK_TYPE = 'inode/symlink';

export async function skillFolderForm(dir: string): Promise<FormData> {
  const form = new FormData();
  const walk = async (at: string): Promise<void> => {
    for (const entry of (await readdir(at, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = join(at, entry.name);
      const name = relative(dir, full).split(sep).join('/');
      const st = await lstat(full);
      if (st.isSymbolicLink()) form.append('files', new File([await readlink(full)], name, { type: SYMLINK_TYPE }));
      else if (st.isDirectory()) await walk(full);
      else if (st.isFile()) {
        form.append('files', new File([await readFile(full)], name, { type: 'application/octet-stream' }));
        if (st.mode & 0o111) form.append('executable', name);
      }
    }
  };
  await walk(dir);
  return form;
}
