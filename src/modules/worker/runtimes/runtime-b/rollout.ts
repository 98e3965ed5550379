import { readdir, readFile } from 'node:fs/promises';
import { basename, join, relative } from 'node:path';
import { badRequest } from '../../../../shared/errors.ts';
import type { TarFile } from '../../../../shared/archive/index.ts';

/**
 * Codex rollouts (RUNTIMES.md §3): `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<YYYY-MM-DDTHH-MM-SS>-<threadId>.jsonl`.
 * The rollout is the thread's source of truth (Codex rebuilds its sqlite files from it), so a bundle is exactly the
 * thread's rollout files. A file belongs to a thread only when the id token after the fixed-shape timestamp IS the
 * thread id: a thread id that is a prefix or a suffix of another (`abc` vs `abc-def`, `x-abc`) never matches.
 */
const ROLLOUT_NAME = /^rollout-(\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2})-([A-Za-z0-9][A-Za-z0-9-]*)\.jsonl$/;

/** The thread id a rollout file name carries, or undefined when the name is not a rollout's. */
export function rolloutThreadId(fileName: string): string | undefined {
  return ROLLOUT_NAME.exec(fileName)?.[2];
}

/** The thread's rollout files, paths relative to CODEX_HOME (regular files only). */
export async function rolloutFiles(codexHome: string, threadId: string): Promise<TarFile[]> {
  const sessions = join(codexHome, 'sessions');
  const entries = await readdir(sessions, { recursive: true, withFileTypes: true }).catch(() => []);
  const files: TarFile[] = [];
  for (const entry of entries) {
    if (!entry.isFile() || rolloutThreadId(entry.name) !== threadId) continue;
    const path = join(entry.parentPath, entry.name);
    files.push({ path: relative(codexHome, path), data: await readFile(path) });
  }
  return files.sort((a, b) => a.path.localeCompare(b.path));
}

/** Checks that a bundle holds rollout files of one thread under `sessions/`, and returns that thread id. */
export function rolloutBundleThreadId(files: readonly TarFile[]): string {
  const ids = new Set<string>();
  for (const { path } of files) {
    const id = path.startsWith('sessions/') ? rolloutThreadId(basename(path)) : undefined;
    if (!id) throw badRequest(`state: unexpected entry ${JSON.stringify(path)} (runtime_b bundles hold sessions/…/rollout-<timestamp>-<thread-id>.jsonl)`);
    ids.add(id);
  }
  if (ids.size !== 1) throw badRequest(`state: the bundle mixes ${ids.size} threads; expected exactly one`);
  return [...ids][0];
}

export interface CodexTotals {
  input_tokens: number;
  cached_input_tokens: number;
  cache_write_input_tokens: number;
  output_tokens: number;
}

export const ZERO_TOTALS: CodexTotals = { input_tokens: 0, cached_input_tokens: 0, cache_write_input_tokens: 0, output_tokens: 0 };

/**
 * The thread's token totals so far: the last `token_count` event in its rollouts. Codex reports cumulative totals at
 * the end of each turn, restored from the rollout on resume (also after an import), so this is the baseline to
 * subtract; reading it from disk also counts the tokens of a turn that failed midway.
 */
export function lastTotals(rollouts: readonly TarFile[]): CodexTotals {
  let totals = ZERO_TOTALS;
  for (const file of rollouts) {
    for (const line of new TextDecoder().decode(file.data).split('\n')) {
      if (!line.includes('"token_count"')) continue;
      try {
        const total = JSON.parse(line)?.payload?.info?.total_token_usage;
        if (total && typeof total.input_tokens === 'number') totals = { ...ZERO_TOTALS, ...total };
      } catch {
        // a torn last line (the process was killed mid-write) carries no totals
      }
    }
  }
  return totals;
}
