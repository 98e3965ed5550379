import { badRequest } from '../../../shared/errors.ts';
import { fileParts, type Parts } from '../multipart.ts';
import { parseFrontMatter } from './front-matter.ts';

/**
 * A skill upload as a list of files: `files[]` parts whose filenames are relative paths (a directory upload), or one
 * `files` part holding a zip. The set must hold exactly one `SKILL.md`, at the skill root (the top level, or the one
 * directory every path shares); its front matter names and describes the skill. Stored and served as a zip whose
 * entries are the uploaded files byte for byte, under the paths they were uploaded with.
 */
export interface SkillFile {
  path: string;
  content: Uint8Array;
}

export interface SkillManifest {
  name: string;
  description: string;
}

const MAX_FILES = 1000;
const MAX_TOTAL_BYTES = 64 * 1024 * 1024;
const ZIP_MAGIC = [0x50, 0x4b, 0x03, 0x04];

/** fflate builds its Huffman tables as it loads (~10 ms of a boot): it is loaded with the first archive instead. */
let fflate: Promise<typeof import('fflate')> | undefined;
const loadFflate = () => (fflate ??= import('fflate'));

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

/** Validates the file set and reads `SKILL.md`'s front matter. */
export function inspectSkill(files: SkillFile[]): SkillManifest {
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
  const fields = parseFrontMatter(text);
  if (!fields) throw badRequest('files: SKILL.md must start with YAML front matter (--- name: …, description: … ---)');
  const name = fields.name?.trim() ?? '';
  const description = fields.description?.trim() ?? '';
  if (!name) throw badRequest('files: SKILL.md front matter must declare a non-empty `name`');
  if (name.length > 64) throw badRequest('files: SKILL.md `name` must be at most 64 characters');
  if (!description) throw badRequest('files: SKILL.md front matter must declare a non-empty `description`');
  if (description.length > 1024) throw badRequest('files: SKILL.md `description` must be at most 1024 characters');
  return { name, description };
}

export async function zipSkill(files: SkillFile[], mtime: Date): Promise<Uint8Array> {
  const { zipSync } = await loadFflate();
  const entries: Record<string, [Uint8Array, { mtime: Date }]> = {};
  for (const f of files) entries[f.path] = [f.content, { mtime }];
  return zipSync(entries, { level: 6 });
}

export async function unzip(bytes: Uint8Array): Promise<SkillFile[]> {
  const { unzipSync } = await loadFflate();
  let total = 0;
  let count = 0;
  let entries: Record<string, Uint8Array>;
  try {
    entries = unzipSync(bytes, {
      filter: (f) => {
        if (f.name.endsWith('/') || f.name.startsWith('__MACOSX/')) return false;
        total += f.originalSize;
        if (++count > MAX_FILES || total > MAX_TOTAL_BYTES) throw new RangeError('too large');
        return true;
      },
    });
  } catch (err) {
    if (err instanceof RangeError) throw badRequest(`files: the zip expands past ${MAX_FILES} files or ${MAX_TOTAL_BYTES} bytes`);
    throw badRequest('files: not a readable zip archive');
  }
  return Object.entries(entries).map(([path, content]) => ({ path, content }));
}

function isZip(name: string, bytes: Uint8Array): boolean {
  return name.toLowerCase().endsWith('.zip') || ZIP_MAGIC.every((b, i) => bytes[i] === b);
}

/** Normalises relative paths (`./a`, `a\\b`) and refuses absolute, parent or duplicate paths. */
function checked(files: SkillFile[]): SkillFile[] {
  if (files.length > MAX_FILES) throw badRequest(`files: at most ${MAX_FILES} files`);
  const seen = new Set<string>();
  let total = 0;
  const out = files.map((f) => {
    const segments = f.path.replace(/\\/g, '/').split('/').filter((s) => s !== '' && s !== '.');
    const path = segments.join('/');
    if (!path || f.path.startsWith('/') || /^[A-Za-z]:/.test(f.path) || segments.includes('..') || path.includes('\0')) {
      throw badRequest(`files: "${f.path}" is not a safe relative path`);
    }
    if (seen.has(path)) throw badRequest(`files: duplicate path "${path}"`);
    seen.add(path);
    total += f.content.byteLength;
    return { path, content: f.content };
  });
  if (total > MAX_TOTAL_BYTES) throw badRequest(`files: at most ${MAX_TOTAL_BYTES} bytes in total`);
  return out;
}

/** `dir/` when every path lies under the same top-level directory, else '' (files at the top level). */
function commonRoot(files: SkillFile[]): string {
  if (files.some((f) => f.path === 'SKILL.md')) return '';
  const tops = new Set(files.map((f) => (f.path.includes('/') ? f.path.slice(0, f.path.indexOf('/')) : '')));
  const [only] = tops;
  return tops.size === 1 && only ? `${only}/` : '';
}
