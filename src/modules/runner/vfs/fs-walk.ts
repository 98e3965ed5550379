import { constants } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { openRegular, fsFailure } from './fs-ops.ts';
import { childOf, VfsError, type VirtualPath } from './paths.ts';
import { lineMatcher } from './line-matcher.ts';
import { checkAccess } from './policy.ts';
import type { Resolved, VfsView } from './vfs.view.ts';

/**
 * Listing and searching directories through a VfsView. Walks never follow symbolic links (they are reported as
 * `symlink` and not entered), every entry passes the same policy check as a direct access, and both are bounded so
 * a huge tree cannot stall the runner.
 */
export interface Entry {
  path: string;
  type: 'file' | 'dir' | 'symlink' | 'other';
}

const MAX_WALK_ENTRIES = 5000;
const MAX_SEARCH_FILE_BYTES = 1024 * 1024;
const MAX_LINE_CHARS = 300;

/** The entries directly inside `dir` that the policy lets the session read. */
async function children(view: VfsView, dir: Resolved): Promise<Array<{ path: VirtualPath; type: Entry['type']; resolved?: Resolved }>> {
  let names: Array<{ name: string; type: Entry['type'] }>;
  if (!dir.host) {
    // the root and /pool exist only virtually: their children are the mounts and the member pools
    names = (dir.path.mount ? view.rules.pools.map((p) => p.name) : view.rules.mounts.map((m) => m.slice(1))).map((name) => ({ name, type: 'dir' }));
  } else {
    try {
      const dirents = await readdir(dir.host, { withFileTypes: true });
      names = dirents.map((d) => ({ name: d.name, type: d.isSymbolicLink() ? 'symlink' : d.isDirectory() ? 'dir' : d.isFile() ? 'file' : 'other' }));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOTDIR') throw new VfsError(`${dir.path.virtual}: not a directory`);
      throw fsFailure(err, dir.path.virtual);
    }
  }
  const out = [];
  for (const { name, type } of names.sort((a, b) => a.name.localeCompare(b.name))) {
    const path = childOf(dir.path, name);
    try {
      // links are shown but never resolved (that would follow them); everything else passes the full check
      if (type === 'symlink') checkAccess(view.rules, path, 'read');
      const resolved = type === 'symlink' ? undefined : await view.resolvePath(path, 'read');
      out.push({ path, type, resolved: type === 'dir' ? resolved : undefined });
    } catch {
      // refused by the policy (another pool's area) or a link leading out: not shown
    }
  }
  return out;
}

export async function listDir(view: VfsView, raw: unknown, recursive: boolean, maxEntries: number) {
  const start = await view.resolve(raw ?? '/work', 'read');
  const entries: Entry[] = [];
  const queue: Resolved[] = [start];
  let truncated = false;
  while (queue.length && !truncated) {
    for (const child of await children(view, queue.shift()!)) {
      if (entries.length >= Math.min(maxEntries, MAX_WALK_ENTRIES)) {
        truncated = true;
        break;
      }
      entries.push({ path: child.path.virtual, type: child.type });
      if (recursive && child.resolved) queue.push(child.resolved);
    }
  }
  return { path: start.path.virtual, entries, truncated };
}

export interface SearchOptions {
  pattern: string;
  regex: boolean;
  ignoreCase: boolean;
  maxResults: number;
}

/** Substring or regex search over the text files below a path (files over 1 MiB and binary files are skipped). */
export async function searchFiles(view: VfsView, raw: unknown, o: SearchOptions) {
  const test = await lineMatcher(o);
  const start = await view.resolve(raw ?? '/work', 'read');
  const matches: Array<{ path: string; line: number; text: string }> = [];
  const queue: Resolved[] = [];
  const files: VirtualPath[] = [];
  if (start.host && !(await isDir(start.host))) files.push(start.path);
  else queue.push(start);
  let seen = 0;
  while (queue.length && seen < MAX_WALK_ENTRIES) {
    for (const child of await children(view, queue.shift()!)) {
      seen++;
      if (child.type === 'file') files.push(child.path);
      else if (child.resolved) queue.push(child.resolved);
    }
  }
  let scanned = 0;
  for (const file of files) {
    if (matches.length >= o.maxResults) break;
    const text = await readSmallText(view, file);
    if (text === undefined) continue;
    scanned++;
    const lines = text.split('\n');
    for (let i = 0; i < lines.length && matches.length < o.maxResults; i++) {
      if (test(lines[i])) matches.push({ path: file.virtual, line: i + 1, text: lines[i].slice(0, MAX_LINE_CHARS) });
    }
  }
  return { path: start.path.virtual, matches, truncated: matches.length >= o.maxResults || seen >= MAX_WALK_ENTRIES, filesScanned: scanned };
}

async function isDir(host: string): Promise<boolean> {
  return lstat(host).then((st) => st.isDirectory(), () => false);
}

async function readSmallText(view: VfsView, path: VirtualPath): Promise<string | undefined> {
  try {
    const { host } = await view.resolvePath(path, 'read');
    const { fh, st } = await openRegular(host!, path.virtual, constants.O_RDONLY);
    try {
      if (st.size > MAX_SEARCH_FILE_BYTES) return undefined;
      const text = (await fh.readFile()).toString('utf8');
      return text.includes('\u0000') ? undefined : text;
    } finally {
      await fh.close();
    }
  } catch {
    return undefined;
  }
}
