import { VFS_MOUNTS, type VfsMount } from '../../../contracts/toolkit.ts';

/**
 * Parsing a VirtualFS path as a tool gives it. This is the first of two walls (the second is the realpath check in
 * vfs.view.ts): anything that could name a place outside a mount is refused here by its spelling alone, before a host
 * path exists. We refuse rather than normalize: `a/../b` would be harmless, but a path that needs cleaning is more
 * likely an attack or a confused model than a file someone wants, and one rule is easier to trust than two.
 */
export class VfsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'VfsError';
  }
}

export interface VirtualPath {
  /** Canonical form: `/work/a/b.txt`; `/` for the VirtualFS root. */
  virtual: string;
  /** undefined for the root itself. */
  mount: VfsMount | undefined;
  /** Segments below the mount, each a plain name. */
  rest: string[];
}

const MAX_PATH_LENGTH = 4096;
const MAX_SEGMENT_LENGTH = 255;

/** The first reason `raw` is not an acceptable spelling, or undefined. */
function spellingProblem(raw: string): string | undefined {
  if (raw.length > MAX_PATH_LENGTH) return `longer than ${MAX_PATH_LENGTH} characters`;
  // NUL truncates C strings in the kernel; other control characters have no business in a name
  if (/[\u0000-\u001f\u007f]/.test(raw)) return 'control characters (NUL included) are not allowed';
  // one separator only: `\\` is a name character on Linux but a separator to many models and to Windows
  if (raw.includes('\\')) return 'backslashes are not allowed; use /';
  // `%2e%2e%2f` must never be decoded by someone later; a literal `%xx` in a name is refused for the same reason
  if (/%[0-9a-fA-F]{2}/.test(raw)) return 'percent-encoded sequences are not allowed';
  if (/^[A-Za-z]:/.test(raw)) return 'drive letters are not allowed';
  if (raw.startsWith('//')) return 'network paths (//host/share) are not allowed';
  return undefined;
}

function segmentProblem(segment: string): string | undefined {
  if (segment === '..') return '".." segments are not allowed';
  if (segment.startsWith('~')) return 'home shortcuts (~) are not allowed';
  if (segment.length > MAX_SEGMENT_LENGTH) return `a name is longer than ${MAX_SEGMENT_LENGTH} characters`;
  // fullwidth and other compatibility forms that normalize to `..` or a separator (U+FF0E, U+2024, U+FF0F)
  const folded = segment.normalize('NFKC');
  if (folded !== segment && (folded.split('/').includes('..') || folded.includes('/') || folded.includes('\\'))) {
    return 'names that normalize to ".." or a separator are not allowed';
  }
  return undefined;
}

/**
 * Parses `raw`: absolute paths must start with a mount (`/work`, `/home`, `/pool`), relative ones are under `/work`
 * (the session's working directory). `.` segments and repeated slashes are dropped.
 */
export function parseVirtualPath(raw: unknown): VirtualPath {
  if (typeof raw !== 'string') throw new VfsError('path: expected a string');
  const refuse = (why: string): never => {
    throw new VfsError(`path ${JSON.stringify(raw)} refused: ${why}`);
  };
  const spelled = spellingProblem(raw);
  if (spelled) refuse(spelled);
  const absolute = raw.startsWith('/');
  const segments = raw.split('/').filter((s) => s !== '' && s !== '.');
  for (const s of segments) {
    const problem = segmentProblem(s);
    if (problem) refuse(problem);
  }
  if (!absolute) segments.unshift('work');
  if (segments.length === 0) return { virtual: '/', mount: undefined, rest: [] };
  const mount = `/${segments[0]}`;
  if (!(VFS_MOUNTS as readonly string[]).includes(mount)) refuse(`not under a mount (${VFS_MOUNTS.join(', ')}); host paths are not reachable`);
  const rest = segments.slice(1);
  return { virtual: [mount, ...rest].join('/'), mount: mount as VfsMount, rest };
}

/** `/work/a` joined with a child name, for walks. */
export function childOf(parent: VirtualPath, name: string): VirtualPath {
  if (!parent.mount) return parseVirtualPath(`/${name}`);
  return { virtual: `${parent.virtual}/${name}`, mount: parent.mount, rest: [...parent.rest, name] };
}
