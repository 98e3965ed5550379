import * as v from 'valibot';

/**
 * Input rules shared by the agents-API resources: metadata maps, trimmed names, standard base64, workspace paths.
 * Messages start with the offending parameter (`name: …`) so the /v1 error carries it as `param`.
 */

/** `metadata`: at most 16 string pairs, keys up to 64 characters, values up to 512 (null or omitted means `{}`). */
export const Metadata = v.pipe(
  v.record(v.string(), v.string()),
  v.check((m) => Object.keys(m).length <= 16, 'at most 16 key-value pairs'),
  v.check((m) => Object.keys(m).every((k) => k.length <= 64), 'keys of at most 64 characters'),
  v.check((m) => Object.values(m).every((x) => x.length <= 512), 'values of at most 512 characters'),
);

/** A name trimmed before storage, 1 to 256 UTF-8 bytes after trimming. */
export const TrimmedName = v.pipe(
  v.string(),
  v.trim(),
  v.check((s) => s.length > 0 && Buffer.byteLength(s, 'utf8') <= 256, 'a name of 1 to 256 UTF-8 bytes after trimming'),
);

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Standard (not url-safe) base64 with padding. */
export const Base64 = v.pipe(v.string(), v.regex(BASE64, 'standard base64'));

export function decodeBase64(data: string): Uint8Array {
  return new Uint8Array(Buffer.from(data, 'base64'));
}

/** Normalises an absolute path (collapses `.` and duplicate slashes); refuses `..` and NUL. Undefined when invalid. */
export function normalizeAbsolute(path: string): string | undefined {
  if (!path.startsWith('/') || path.includes('\0')) return undefined;
  const parts: string[] = [];
  for (const seg of path.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') return undefined;
    parts.push(seg);
  }
  return '/' + parts.join('/');
}

/** An absolute file path strictly inside `root` (e.g. `/workspace/notes.md` inside `/workspace`). */
export function isInside(path: string, root: string): boolean {
  return root === '/' ? path !== '/' : path.startsWith(root + '/');
}

export const HttpsUrl = v.pipe(v.string(), v.url('an https URL'), v.regex(/^https:\/\//i, 'an https URL'));
