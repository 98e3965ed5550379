import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { badRequest } from '../../../../shared/errors.ts';
import type { TarFile } from '../../../../shared/archive/index.ts';

/**
 * Claude Code session transcripts (RUNTIMES.md §2): `$CLAUDE_CONFIG_DIR/projects/<cwd-derived>/<sessionId>.jsonl`,
 * plus the sibling folder `<sessionId>/` for subagent transcripts. `resume` searches every project folder, so a
 * bundle keeps these paths as they are and an import may land in a worker with another working directory.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isClaudeSessionId = (id: string) => UUID.test(id);

async function projectFolders(configDir: string): Promise<string[]> {
  try {
    const entries = await readdir(join(configDir, 'projects'), { withFileTypes: true });
    return entries.filter((e) => e.isDirectory()).map((e) => join(configDir, 'projects', e.name));
  } catch {
    return [];
  }
}

async function isFile(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isFile() ?? false;
}

export async function hasTranscript(configDir: string, sessionId: string): Promise<boolean> {
  for (const folder of await projectFolders(configDir)) if (await isFile(join(folder, `${sessionId}.jsonl`))) return true;
  return false;
}

/** The session's transcript files, paths relative to the config dir (regular files only; links are never followed). */
export async function transcriptFiles(configDir: string, sessionId: string): Promise<TarFile[]> {
  const files: TarFile[] = [];
  for (const folder of await projectFolders(configDir)) {
    const main = join(folder, `${sessionId}.jsonl`);
    if (await isFile(main)) files.push({ path: relative(configDir, main), data: await readFile(main) });
    const side = join(folder, sessionId);
    const entries = await readdir(side, { recursive: true, withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (!entry.isFile()) continue;
      const path = join(entry.parentPath, entry.name);
      files.push({ path: relative(configDir, path), data: await readFile(path) });
    }
  }
  return files;
}

/**
 * Checks that a bundle holds one session's transcript and nothing else, and returns that session id. Entries must be
 * `projects/<folder>/<uuid>.jsonl` or lie under `projects/<folder>/<uuid>/`, all with the same uuid.
 */
export function transcriptSessionId(files: readonly TarFile[]): string {
  const ids = new Set<string>();
  let transcripts = 0;
  for (const { path } of files) {
    const m = /^projects\/[^/]+\/([^/]+?)(\.jsonl)?(\/.+)?$/.exec(path);
    const id = m?.[1] ?? '';
    const isTranscript = !!m?.[2] && !m[3];
    const isSide = !m?.[2] && !!m?.[3];
    if (!m || !isClaudeSessionId(id) || (!isTranscript && !isSide)) {
      throw badRequest(`state: unexpected entry ${JSON.stringify(path)} (runtime_a bundles hold projects/<folder>/<session-uuid>.jsonl and projects/<folder>/<session-uuid>/…)`);
    }
    ids.add(id);
    if (isTranscript) transcripts++;
  }
  if (ids.size !== 1) throw badRequest(`state: the bundle mixes ${ids.size} sessions; expected exactly one`);
  if (transcripts !== 1) throw badRequest(`state: expected exactly one transcript (<session-uuid>.jsonl), found ${transcripts}`);
  return [...ids][0];
}
