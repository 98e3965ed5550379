import { checkEntryName, describeLimit, readZip, UPLOAD_ARCHIVE_LIMITS, writeZip } from '../../../shared/archive/index.ts';
import { AppError, badRequest } from '../../../shared/errors.ts';
import { fileParts, type Parts } from '../multipart.ts';
import { parseFrontMatter } from './front-matter.ts';

/**
 * A skill upload as a list of files: `files[]` parts whose filenames are relative paths (a directory upload), or one
 * `files` part holding a zip. The set must hold exactly one `SKILL.md`, at the skill root (the top level, or the one
 * directory every path shares); its front matter names and describes the skill. Stored and served as a zip whose
 * entries are the uploaded files byte for byte, under the paths they were uploaded with. A zip is read by the archive
 * module (real bytes counted, off the event loop); both forms then meet the same limits (UPLOAD_ARCHIVE_LIMITS) and
 * the same path rules.
 */
export interface SkillFile {
  path: string;
  content: Uint8Array;
}

export interface SkillManifest {
  name: string;
  description: string;
}

const LIMITS = UPLOAD_ARCHIVE_LIMITS;
const ZIP_MAGIC = [0x50, 0x4b, 0x03, 0x04];

/**
 * A skill's name names its folder wherever it is installed and its download (`<name>-v1.zip`): letters, digits, `.`,
 * `_` and `-`, starting with a letter or digit, no `..`; so never a path (`/`, `\`), a traversal or a control character.
 */
const SKILL_NAME = /^(?!.*\.\.)[A-Za-z0-9][A-Za-z0-9._-]*$/;
const MAX_NAME_CHARS = 64;


export async function collectSkillFiles(parts: Parts): Promise<SkillFile[]> {
  const uploads = fileParts(parts, 'files[]', 'files');
  if (uploads.length === 0) throw badRequest('files: at least one file is required (a directory upload as files[] parts, or a single zip)');
  if (uploads.length === 1) {
    const bytes = new Uint8Array(await uploads[0].arrayBuffer());
    if (isZip(uploads[0].name, bytes)) return checked(await unzip(bytes));
    return checked([{ path: uploads[0].name, content: bytes }]);
  }
  const files: SkillFile[] = [];
  for (const upload of uploads) files.push({ path: upload.name, content: new Uint8Array(await upload.arrayBuffer()) });
  return checked(files);
}

/** Validates the file set and reads `SKILL.md`'s front matter; every problem is a 400 naming `files`. */
export async function inspectSkill(files: SkillFile[]): Promise<SkillManifest> {
  const skillMds = files.filter((f) => f.path === 'SKILL.md' || f.path.endsWith('/SKILL.md'));
  if (skillMds.length > 1) throw badRequest(`files: exactly one SKILL.md is allowed, found ${skillMds.length} (${skillMds.map((f) => f.path).join(', ')})`);
  const root = commonRoot(files);
  const skillMd = skillMds[0];
  if (!skillMd || skillMd.path !== `${root}SKILL.md`) {
    throw badRequest(`files: SKILL.md is required at the skill root${root ? ` (${root}SKILL.md)` : ''}`);
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(skillMd.content);
  } catch {
    throw badRequest('files: SKILL.md must be UTF-8 text');
  }
  const front = await parseFrontMatter(text);
  if (front.problem !== undefined) throw badRequest(`files: SKILL.md ${front.problem}`);
  const name = stringField(front.fields, 'name');
  const description = stringField(front.fields, 'description');
  if (!name) throw badRequest('files: SKILL.md front matter must declare a non-empty `name`');
  const problem = skillNameProblem(name);
  if (problem) throw badRequest(`files: SKILL.md \`name\` ${problem}`);
  if (!description) throw badRequest('files: SKILL.md front matter must declare a non-empty `description`');
  if (description.length > 1024) throw badRequest('files: SKILL.md `description` must be at most 1024 characters');
  return { name, description };
}

/** Why `name` cannot name a skill (a plugin too), or undefined. */
export function skillNameProblem(name: string): string | undefined {
  if (name.length > MAX_NAME_CHARS) return `must be at most ${MAX_NAME_CHARS} characters`;
  if (!SKILL_NAME.test(name)) return `${JSON.stringify(name)} is not a skill name: use letters, digits, ".", "_" and "-", starting with a letter or digit, without ".." (no paths)`;
  return undefined;
}

export function zipSkill(files: SkillFile[], mtime: Date): Promise<Uint8Array> {
  return writeZip(files, mtime);
}

/** The files of an uploaded zip, without folders and the `__MACOSX/` resource forks macOS adds. */
export async function unzip(bytes: Uint8Array): Promise<SkillFile[]> {
  const files = await readZip(bytes, { field: 'files', limits: LIMITS });
  return files.filter((f) => !f.path.startsWith('__MACOSX/')).map((f) => ({ path: f.path, content: f.content }));
}

/** A trimmed string field; absent is ''; any other type is a 400 naming the key. */
function stringField(fields: Record<string, unknown>, key: string): string {
  const value = fields[key];
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw badRequest(`files: SKILL.md \`${key}\` must be a string`);
  return value.trim();
}

function isZip(name: string, bytes: Uint8Array): boolean {
  return name.toLowerCase().endsWith('.zip') || ZIP_MAGIC.every((b, i) => bytes[i] === b);
}

/** Normalises relative paths (`./a`, `a\\b`) with the archive rules, and applies the upload limits to both forms. */
function checked(files: SkillFile[]): SkillFile[] {
  if (files.length > LIMITS.entries) throw new AppError(413, `files: ${files.length} files, over the limit of ${describeLimit('entries', LIMITS)}`, { code: 'archive_entries' });
  const seen = new Set<string>();
  let total = 0;
  const out = files.map((f) => {
    const path = checkEntryName('files', f.path, LIMITS);
    if (seen.has(path)) throw badRequest(`files: duplicate path "${path}"`);
    seen.add(path);
    if (f.content.byteLength > LIMITS.entryBytes) {
      throw new AppError(413, `files: "${path}" is ${f.content.byteLength} bytes, over the limit of ${describeLimit('entryBytes', LIMITS)} per file`, { code: 'archive_entry_bytes' });
    }
    total += f.content.byteLength;
    return { path, content: f.content };
  });
  if (total > LIMITS.totalBytes) throw new AppError(413, `files: ${total} bytes in total, over the limit of ${describeLimit('totalBytes', LIMITS)}`, { code: 'archive_total_bytes' });
  return out;
}

/** `dir/` when every path lies under the same top-level directory, else '' (files at the top level). */
function commonRoot(files: SkillFile[]): string {
  if (files.some((f) => f.path === 'SKILL.md')) return '';
  const tops = new Set(files.map((f) => (f.path.includes('/') ? f.path.slice(0, f.path.indexOf('/')) : '')));
  const [only] = tops;
  return tops.size === 1 && only ? `${only}/` : '';
}
