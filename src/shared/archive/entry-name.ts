import { describeLimit, entryRefusal, limitRefusal, MAX_NAME_CHARS, type ArchiveLimits } from './limits.ts';

/**
 * Entry names and kinds, the same rules for every archive format. A name is a relative path with `/` between folders;
 * backslashes are read as separators (old Windows tools wrote them), so `..\..\x` is a traversal like `../../x`.
 * Refused: `..` segments, absolute names (`/x`, `\x`), drive letters (`C:`), control characters (NUL included), names
 * deeper than the depth limit, and anything that is not a regular file or a folder (links, devices, FIFOs, sockets).
 * `.` and empty segments (`./a`, `a//b`) are dropped.
 */
export type EntryKind = 'file' | 'directory' | 'symlink' | 'hardlink' | 'device' | 'fifo' | 'socket';

/** The normalised relative path of an entry name (folders without their trailing `/`); throws a 400 naming it. */
export function checkEntryName(field: string, raw: string, limits: ArchiveLimits): string {
  const shown = JSON.stringify(raw.length > 200 ? `${raw.slice(0, 200)}…` : raw);
  const refuse = (why: string) => entryRefusal(field, 'archive_entry_name', `entry ${shown} ${why}`);
  if (raw.length > MAX_NAME_CHARS) throw refuse(`is longer than ${MAX_NAME_CHARS} characters`);
  if (/[\u0000-\u001f\u007f]/.test(raw)) throw refuse('holds a control character (NUL, newline, …)');
  const name = raw.replace(/\\/g, '/');
  if (name.startsWith('/')) throw refuse('is an absolute path');
  if (/^[A-Za-z]:/.test(name)) throw refuse('starts with a drive letter');
  const segments = name.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) throw refuse('climbs out of the archive with ".."');
  if (segments.length === 0) throw refuse('names no file');
  if (segments.length > limits.depth) {
    throw limitRefusal(field, 'depth', `entry ${shown} is ${segments.length} levels deep, over the limit of ${describeLimit('depth', limits)} levels`);
  }
  return segments.join('/');
}

/** Why an entry of this kind is refused, or undefined for files and folders. */
export function kindProblem(kind: EntryKind): string | undefined {
  switch (kind) {
    case 'file':
    case 'directory':
      return undefined;
    case 'symlink':
      return 'is a symbolic link (only regular files and folders are allowed)';
    case 'hardlink':
      return 'is a hard link (only regular files and folders are allowed)';
    default:
      return `is a ${kind} (only regular files and folders are allowed)`;
  }
}

const S_IFMT = 0o170000;
const KINDS: Record<number, EntryKind> = {
  0o100000: 'file',
  0o040000: 'directory',
  0o120000: 'symlink',
  0o020000: 'device',
  0o060000: 'device',
  0o010000: 'fifo',
  0o140000: 'socket',
};

/** The kind a Unix mode (`st_mode`) names; a mode without a type (0, as DOS-made archives have) is a file. */
export function kindOfMode(mode: number, isDirectoryName: boolean): EntryKind {
  const type = mode & S_IFMT;
  if (type === 0) return isDirectoryName ? 'directory' : 'file';
  return KINDS[type] ?? 'device';
}
