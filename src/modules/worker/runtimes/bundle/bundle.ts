import { gunzipSync, gzipSync } from 'node:zlib';
import { badRequest } from '../../../../shared/errors.ts';
import { packTar, TarError, unpackTar, type TarFile } from './tar.ts';

/**
 * State bundles of the SDK runtimes (runtime_a, runtime_b): a gzip-compressed tar of a few files, paths relative to
 * the runtime's state folder. Unpacking rejects everything that is not a clean relative path to a regular file, so
 * the runtime-specific checks only decide which files belong to a session. Every problem is a 400 starting `state:`.
 */
export const BUNDLE_CONTENT_TYPE = 'application/gzip';

/** Unpacked size cap: a bundle is a transcript or a rollout, and a gzip bomb must not exhaust the worker's memory. */
export const MAX_UNPACKED_BYTES = 256 * 1024 * 1024;

export function packBundle(files: readonly TarFile[]): Uint8Array {
  return gzipSync(packTar(files));
}

/**
 * A relative path that stays inside the folder it is joined to: no absolute paths, no `.` or `..` segments, no empty
 * segments, no backslashes or NUL (which mean different things to different tools).
 */
export function isCleanRelativePath(path: string): boolean {
  if (!path || path.startsWith('/') || /[\\\0]/.test(path)) return false;
  return path.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..');
}

/** The regular files of a bundle (directory entries are checked, then dropped: folders are implied by file paths). */
export function unpackBundle(body: Uint8Array, maxBytes = MAX_UNPACKED_BYTES): TarFile[] {
  let tar: Uint8Array;
  try {
    tar = gunzipSync(body, { maxOutputLength: maxBytes });
  } catch (err) {
    const tooLarge = (err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE';
    throw badRequest(tooLarge ? `state: bundle unpacks to more than ${maxBytes} bytes` : 'state: not a gzip stream (expected application/gzip tar.gz)');
  }
  let entries: TarFile[];
  try {
    entries = unpackTar(tar);
  } catch (err) {
    if (err instanceof TarError) throw badRequest(`state: not a valid tar archive (${err.message})`);
    throw err;
  }
  const files: TarFile[] = [];
  const seen = new Set<string>();
  for (const entry of entries) {
    const isDir = entry.path.endsWith('/');
    const path = isDir ? entry.path.slice(0, -1) : entry.path;
    if (!isCleanRelativePath(path)) throw badRequest(`state: entry ${JSON.stringify(entry.path)} is not a clean relative path`);
    if (isDir) continue;
    if (seen.has(path)) throw badRequest(`state: entry ${JSON.stringify(path)} appears twice`);
    seen.add(path);
    files.push({ path, data: entry.data });
  }
  if (files.length === 0) throw badRequest('state: bundle holds no files');
  return files;
}
