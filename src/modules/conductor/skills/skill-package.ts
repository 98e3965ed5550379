import { createHash } from 'node:crypto';
import { MAX_SKILL_BODY_CHARS, SKILL_NAME_PATTERN, SKILL_NAME_RULE } from './skill.schema.ts';

/**
 * One skill folder read as a package (seed 000, "Skills catalog"): the files of a staged import or of a platform skill
 * in, the dry-run facts out (front matter, resources with sha256 and executable bit, validation). Pure: the import
 * route and the platform seeding both call it, and nothing is written when `validation.ok` is false.
 */
export const MAX_FILE_BYTES = 4 * 1024 * 1024;
export const MAX_PACKAGE_BYTES = 16 * 1024 * 1024;
export const MAX_FILES = 500;
const MAX_PATH_CHARS = 512;

export interface PackageEntry {
  /** Package-relative name as uploaded (`scripts/run.sh`). */
  path: string;
  bytes: Uint8Array;
  executable: boolean;
  /** A symbolic link (the CLI sends it as a part of type `inode/symlink`): always refused. */
  link: boolean;
}

export interface ResourceInfo {
  path: string;
  contentType: string;
  sha256: string;
  executable: boolean;
  bytes: number;
}

export interface Issue {
  code: string;
  message: string;
  path?: string;
}

export interface SkillMeta {
  name: string;
  description: string;
  license: string | null;
  compatibility: string | null;
  allowedTools: string[];
  metadata: Record<string, unknown>;
}

export interface SkillPackage {
  skill: SkillMeta;
  /** The SKILL.md instructions after the front matter. */
  body: string;
  resources: ResourceInfo[];
  requiresSandbox: boolean;
  totalBytes: number;
  validation: { ok: boolean; errors: Issue[]; warnings: Issue[] };
}

const KNOWN_KEYS = new Set(['name', 'description', 'license', 'compatibility', 'allowed-tools', 'metadata']);

const TYPES: Record<string, string> = {
  md: 'text/markdown',
  txt: 'text/plain',
  sh: 'text/x-shellscript',
  py: 'text/x-python',
  js: 'text/javascript',
  ts: 'text/x-typescript',
  json: 'application/json',
  yaml: 'application/yaml',
  yml: 'application/yaml',
  html: 'text/html',
  csv: 'text/csv',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  svg: 'image/svg+xml',
  pdf: 'application/pdf',
  zip: 'application/zip',
};

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

function isUtf8(bytes: Uint8Array): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

function contentTypeOf(path: string, bytes: Uint8Array): string {
  const ext = /\.([A-Za-z0-9]+)$/.exec(path)?.[1]?.toLowerCase();
  if (ext && TYPES[ext]) return TYPES[ext];
  return isUtf8(bytes) ? 'text/plain' : 'application/octet-stream';
}

/** Why a package-relative name is refused, or undefined. */
export function pathProblem(path: string): Issue | undefined {
  const issue = (code: string, why: string): Issue => ({ code, path, message: `${path === '' ? '(empty name)' : path}: ${why}` });
  if (path === '') return issue('invalid_path', 'a file needs a package-relative name');
  if (path.length > MAX_PATH_CHARS) return issue('invalid_path', `names are at most ${MAX_PATH_CHARS} characters`);
  if (/[\0-\x1f]/.test(path)) return issue('invalid_path', 'control characters are not allowed in names');
  if (path.startsWith('/') || path.startsWith('\\') || /^[A-Za-z]:/.test(path)) return issue('absolute_path', 'absolute names are not allowed; use names relative to the skill folder');
  if (path.includes('\\')) return issue('invalid_path', 'use "/" as the folder separator');
  const segments = path.split('/');
  if (segments.includes('..')) return issue('path_traversal', '".." would leave the skill folder');
  if (segments.some((s) => s === '' || s === '.')) return issue('invalid_path', 'empty or "." folder names are not allowed');
  return undefined;
}

/** Splits `---` front matter from the markdown; undefined front matter when the text does not open with one. */
function splitFrontMatter(text: string): { yaml: string | undefined; body: string } {
  const m = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/.exec(text);
  return m ? { yaml: m[1], body: text.slice(m[0].length) } : { yaml: undefined, body: text };
}

async function readFrontMatter(text: string, errors: Issue[], warnings: Issue[]): Promise<{ meta: SkillMeta; body: string }> {
  const meta: SkillMeta = { name: '', description: '', license: null, compatibility: null, allowedTools: [], metadata: {} };
  const fail = (code: string, message: string) => errors.push({ code, path: 'SKILL.md', message: `SKILL.md: ${message}` });
  const { yaml, body } = splitFrontMatter(text);
  if (yaml === undefined) {
    fail('front_matter', 'missing the YAML front matter (a block between "---" lines with at least name and description)');
    return { meta, body };
  }
  // the YAML parser loads with the first package read, not with the server (a restart reads none)
  const { parseDocument } = await import('yaml');
  const doc = parseDocument(yaml, { uniqueKeys: true });
  if (doc.errors.length) {
    fail('front_matter', `front matter is not valid YAML: ${doc.errors[0].message.split('\n')[0]}`);
    return { meta, body };
  }
  let fm: unknown;
  try {
    fm = doc.toJS({ maxAliasCount: 50 });
  } catch (err) {
    fail('front_matter', `front matter could not be read: ${(err as Error).message}`);
    return { meta, body };
  }
  if (!fm || typeof fm !== 'object' || Array.isArray(fm)) {
    fail('front_matter', 'front matter must be a mapping of keys to values');
    return { meta, body };
  }
  const fields = fm as Record<string, unknown>;
  const str = (key: string, max: number): string | null => {
    const value = fields[key];
    if (value === undefined || value === null) return null;
    if (typeof value !== 'string') return (fail('front_matter', `${key}: expected a string`), null);
    if (value.length > max) return (fail('front_matter', `${key}: at most ${max} characters`), null);
    return value;
  };
  const name = str('name', 128);
  if (name === null) fail('front_matter', 'name: required');
  else if (!SKILL_NAME_PATTERN.test(name)) fail('front_matter', `name: ${JSON.stringify(name)} is not ${SKILL_NAME_RULE}`);
  else meta.name = name;
  const description = str('description', 1024);
  if (description === null || description.trim() === '') fail('front_matter', 'description: required');
  else meta.description = description;
  meta.license = str('license', 200);
  meta.compatibility = str('compatibility', 500);
  const tools = fields['allowed-tools'];
  if (typeof tools === 'string') meta.allowedTools = tools.split(/[\s,]+/).filter(Boolean);
  else if (Array.isArray(tools) && tools.every((t) => typeof t === 'string')) meta.allowedTools = tools as string[];
  else if (tools !== undefined && tools !== null) fail('front_matter', 'allowed-tools: expected a list of tool names or a space-separated string');
  const metadata = fields.metadata;
  if (metadata && typeof metadata === 'object' && !Array.isArray(metadata)) meta.metadata = metadata as Record<string, unknown>;
  else if (metadata !== undefined && metadata !== null) fail('front_matter', 'metadata: expected a mapping');
  for (const key of Object.keys(fields)) {
    if (!KNOWN_KEYS.has(key)) warnings.push({ code: 'unknown_key', path: 'SKILL.md', message: `SKILL.md: front matter key ${key} is not part of the skill format and is ignored` });
  }
  if (body.length > MAX_SKILL_BODY_CHARS) fail('too_large', `instructions are over ${MAX_SKILL_BODY_CHARS} characters`);
  if (body.trim() === '') warnings.push({ code: 'empty_body', path: 'SKILL.md', message: 'SKILL.md: no instructions after the front matter' });
  return { meta, body };
}

/**
 * Names given with the folder in front (`my-skill/SKILL.md`, as a browser's folder upload sends them) are taken
 * relative to that folder when every file is inside it and its SKILL.md is there; anything else is left as is.
 */
export function withinFolder(entries: readonly PackageEntry[]): PackageEntry[] {
  const tops = new Set(entries.map((e) => e.path.split('/')[0]));
  if (tops.size !== 1 || entries.some((e) => e.path === 'SKILL.md' || !e.path.includes('/'))) return [...entries];
  const [top] = tops;
  if (top === '' || top === '..' || top === '.' || !entries.some((e) => e.path === `${top}/SKILL.md`)) return [...entries];
  return entries.map((e) => ({ ...e, path: e.path.slice(top.length + 1) }));
}

/** Reads a skill folder's files as a package; every problem lands in `validation.errors`, never thrown. */
export async function readPackage(entries: readonly PackageEntry[]): Promise<SkillPackage> {
  const errors: Issue[] = [];
  const warnings: Issue[] = [];
  const seen = new Set<string>();
  const resources: ResourceInfo[] = [];
  let skillMd: PackageEntry | undefined;
  let totalBytes = 0;
  if (entries.length > MAX_FILES) errors.push({ code: 'too_many_files', message: `a skill package holds at most ${MAX_FILES} files (got ${entries.length})` });
  for (const e of entries) {
    totalBytes += e.bytes.byteLength;
    const problem = pathProblem(e.path);
    if (problem) {
      errors.push(problem);
      continue;
    }
    if (seen.has(e.path)) {
      errors.push({ code: 'duplicate_path', path: e.path, message: `${e.path}: appears more than once` });
      continue;
    }
    seen.add(e.path);
    if (e.link) {
      errors.push({ code: 'link', path: e.path, message: `${e.path}: symbolic links are not allowed; include the file itself` });
      continue;
    }
    if (e.bytes.byteLength > MAX_FILE_BYTES) {
      errors.push({ code: 'file_too_large', path: e.path, message: `${e.path}: ${e.bytes.byteLength} bytes is over the ${MAX_FILE_BYTES}-byte limit per file` });
      continue;
    }
    if (e.path === 'SKILL.md') {
      skillMd = e;
      continue;
    }
    if (e.path.split('/').at(-1) === 'SKILL.md') {
      errors.push({ code: 'second_skill_md', path: e.path, message: `${e.path}: a second SKILL.md; upload exactly one skill folder` });
      continue;
    }
    resources.push({ path: e.path, contentType: contentTypeOf(e.path, e.bytes), sha256: sha256(e.bytes), executable: e.executable, bytes: e.bytes.byteLength });
  }
  if (totalBytes > MAX_PACKAGE_BYTES) errors.push({ code: 'package_too_large', message: `the package is ${totalBytes} bytes, over the ${MAX_PACKAGE_BYTES}-byte limit` });
  let meta: SkillMeta = { name: '', description: '', license: null, compatibility: null, allowedTools: [], metadata: {} };
  let body = '';
  if (!skillMd) {
    if (!errors.some((e) => e.path === 'SKILL.md')) errors.push({ code: 'missing_skill_md', message: 'SKILL.md: missing at the root of the skill folder' });
  } else if (!isUtf8(skillMd.bytes)) {
    errors.push({ code: 'front_matter', path: 'SKILL.md', message: 'SKILL.md: not UTF-8 text' });
  } else {
    ({ meta, body } = await readFrontMatter(new TextDecoder().decode(skillMd.bytes), errors, warnings));
  }
  resources.sort((a, b) => a.path.localeCompare(b.path));
  const requiresSandbox = resources.some((r) => r.executable || r.path.startsWith('scripts/'));
  return { skill: meta, body, resources, requiresSandbox, totalBytes, validation: { ok: errors.length === 0, errors, warnings } };
}
