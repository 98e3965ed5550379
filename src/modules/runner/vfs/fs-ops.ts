import { constants, type Stats } from 'node:fs';
import { lstat, mkdir, open, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { VfsError } from './paths.ts';
import type { VfsView } from './vfs.view.ts';

/**
 * Reading, writing and editing files through a VfsView. Files are opened with O_NOFOLLOW (a link swapped in after
 * the path check still fails) and O_NONBLOCK (a FIFO cannot hang the tool), then must be regular files with one link
 * (a hard link made by a command could otherwise alias a host file).
 */
export const MAX_READ_BYTES = 1024 * 1024;
export const MAX_WRITE_BYTES = 4 * 1024 * 1024;

const { O_RDONLY, O_RDWR, O_CREAT, O_NOFOLLOW, O_NONBLOCK } = constants;

/** Turns a filesystem errno into a sentence about the virtual path; anything else passes through. */
export function fsFailure(err: unknown, virtual: string): Error {
  const code = (err as NodeJS.ErrnoException)?.code;
  const why: Record<string, string> = {
    ENOENT: 'no such file or directory',
    EISDIR: 'is a directory',
    ENOTDIR: 'a parent is not a directory',
    ELOOP: 'is a symbolic link',
    EEXIST: 'already exists',
    EACCES: 'permission denied',
    ENOSPC: 'no space left',
  };
  return code && why[code] ? new VfsError(`${virtual}: ${why[code]}`) : (err as Error);
}

export async function openRegular(host: string, virtual: string, flags: number): Promise<{ fh: FileHandle; st: Stats }> {
  let fh: FileHandle;
  try {
    fh = await open(host, flags | O_NOFOLLOW | O_NONBLOCK, 0o644);
  } catch (err) {
    throw fsFailure(err, virtual);
  }
  const st = await fh.stat();
  const problem = !st.isFile() ? 'not a regular file' : st.nlink > 1 ? 'hard-linked files are refused' : undefined;
  if (problem) {
    await fh.close();
    throw new VfsError(`${virtual}: ${problem}`);
  }
  return { fh, st };
}

/** A file as the file tools show it: its text; its bytes in base64 when asked for; or, for a binary file, what it is. */
export type FileRead =
  | { path: string; size: number; truncated: boolean; content: string }
  | { path: string; size: number; truncated: boolean; encoding: 'base64'; mediaType: string; content: string }
  | { path: string; size: number; truncated: boolean; binary: true; mediaType: string };

/**
 * Reads up to `maxBytes` of a file from byte `offset` (0 by default). Text is UTF-8 without NUL bytes (a sequence the
 * limit cut is dropped); anything else is binary and answered as such, with its size and media type (from its name),
 * never decoded into replacement characters: with `base64` its bytes come back in base64 instead. `truncated`: the
 * file goes on past what was read.
 */
export async function readFile(view: VfsView, raw: unknown, opts: { maxBytes?: number; encoding?: 'text' | 'base64'; offset?: number } = {}): Promise<FileRead> {
  const { path, host } = await view.resolve(raw, 'read');
  if (!host) throw new VfsError(`${path.virtual}: is a directory`);
  const { fh, st } = await openRegular(host, path.virtual, O_RDONLY);
  let bytes: Buffer;
  const offset = Math.min(opts.offset ?? 0, st.size);
  try {
    const length = Math.min(st.size - offset, opts.maxBytes ?? MAX_READ_BYTES);
    const buf = Buffer.alloc(length);
    const { bytesRead } = await fh.read(buf, 0, length, offset);
    bytes = buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
  const head = { path: path.virtual, size: st.size, truncated: st.size > offset + bytes.byteLength };
  if (opts.encoding === 'base64') return { ...head, encoding: 'base64', mediaType: await mediaTypeOf(path.virtual), content: bytes.toString('base64') };
  const content = textOf(bytes, head.truncated);
  if (content !== undefined) return { ...head, content };
  return { ...head, binary: true, mediaType: await mediaTypeOf(path.virtual) };
}

/** The text of a file's bytes, or undefined when they are not text: a NUL byte, or not UTF-8. */
function textOf(bytes: Buffer, truncated: boolean): string | undefined {
  if (bytes.includes(0)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: truncated });
  } catch {
    return undefined;
  }
}

/** mime-types (and its 200 kB table) is loaded the first time a binary file is read, not when the runner starts. */
async function mediaTypeOf(path: string): Promise<string> {
  const { lookup } = await import('mime-types');
  return lookup(path) || 'application/octet-stream';
}

/** A text file's content; a binary file is refused, naming what it is (the editing tools change text only). */
export async function readText(view: VfsView, raw: unknown, maxBytes = MAX_READ_BYTES) {
  const file = await readFile(view, raw, { maxBytes });
  if ('binary' in file) throw new VfsError(`${file.path}: a binary file (${file.size} bytes, ${file.mediaType}), not text`);
  return file;
}

function checkSize(content: string): Buffer {
  const bytes = Buffer.from(content, 'utf8');
  if (bytes.byteLength > MAX_WRITE_BYTES) throw new VfsError(`content is over the ${MAX_WRITE_BYTES}-byte limit`);
  return bytes;
}

async function openForWrite(view: VfsView, raw: unknown) {
  const { path, host } = await view.resolve(raw, 'write');
  if (!host || path.rest.length === 0 || (path.mount === '/pool' && path.rest.length === 1)) throw new VfsError(`${path.virtual}: is a directory`);
  try {
    await mkdir(dirname(host), { recursive: true, mode: 0o700 });
  } catch (err) {
    throw fsFailure(err, path.virtual);
  }
  const existed = await lstat(host).then(() => true, () => false);
  return { path, existed, ...(await openRegular(host, path.virtual, O_RDWR | O_CREAT)) };
}

export async function writeText(view: VfsView, raw: unknown, content: string) {
  const bytes = checkSize(content);
  const { path, fh, existed } = await openForWrite(view, raw);
  try {
    // truncate only after the checks: opening with O_TRUNC would empty a file we then refuse
    await fh.truncate(0);
    await fh.write(bytes, 0, bytes.byteLength, 0);
    return { path: path.virtual, bytesWritten: bytes.byteLength, created: !existed };
  } finally {
    await fh.close();
  }
}

/** Exact string replacement: `oldString` must occur exactly once unless `replaceAll`. */
export async function editText(view: VfsView, raw: unknown, oldString: string, newString: string, replaceAll: boolean) {
  if (oldString === '') throw new VfsError('old_string: must not be empty');
  const current = await readText(view, raw, MAX_WRITE_BYTES);
  if (current.truncated) throw new VfsError(`${current.path}: over the ${MAX_WRITE_BYTES}-byte edit limit`);
  const count = current.content.split(oldString).length - 1;
  if (count === 0) throw new VfsError(`${current.path}: old_string not found`);
  if (count > 1 && !replaceAll) throw new VfsError(`${current.path}: old_string occurs ${count} times; give more context or set replace_all`);
  const next = replaceAll ? current.content.split(oldString).join(newString) : current.content.replace(oldString, () => newString);
  await writeText(view, raw, next);
  return { path: current.path, replacements: replaceAll ? count : 1 };
}
