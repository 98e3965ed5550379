import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { usageError } from '../client/exit.ts';
import { KIND_WORDS, KINDS, kindOf, type Kind, type Obj } from './kinds.ts';

/**
 * Resource files: YAML (one or more documents, `---` between them) or JSON (one object or an array), each document
 * `kind: <profile|pool|automation|workflow>` plus the resource's own fields, as the API takes them. A folder means every
 * .yaml, .yml and .json file in it (not its subfolders), by name. Everything is read and checked before any request.
 */
export interface ResourceDoc {
  kind: Kind;
  name: string;
  /** The fields sent to the API (without `kind`). */
  body: Obj;
  /** Where it came from, for messages: `file` or `file#2` for the second document. */
  source: string;
}

const EXTENSIONS = new Set(['.yaml', '.yml', '.json']);

export function resourceFiles(path: string): string[] {
  let st;
  try {
    st = statSync(path);
  } catch {
    throw usageError(`-f: no such file or folder: ${path}`);
  }
  if (!st.isDirectory()) return [path];
  const files = readdirSync(path)
    .filter((f) => EXTENSIONS.has(extname(f).toLowerCase()))
    .sort()
    .map((f) => join(path, f))
    .filter((f) => statSync(f).isFile());
  if (files.length === 0) throw usageError(`-f: no .yaml, .yml or .json file in ${path}`);
  return files;
}

function parseFile(file: string): unknown[] {
  const text = readFileSync(file, 'utf8');
  if (extname(file).toLowerCase() === '.json') {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw usageError(`${file}: not valid JSON (${(err as Error).message})`);
    }
    return Array.isArray(value) ? value : [value];
  }
  const docs = parseAllDocuments(text);
  const list = Array.isArray(docs) ? docs : [docs];
  const values: unknown[] = [];
  for (const d of list) {
    if (d.errors.length) throw usageError(`${file}: not valid YAML (${d.errors[0].message.split('\n')[0]})`);
    const v = d.toJS();
    if (v !== null && v !== undefined) values.push(v);
  }
  return values;
}

function toDoc(value: unknown, source: string): ResourceDoc {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw usageError(`${source}: expected an object with kind and name`);
  const { kind: word, ...body } = value as Obj;
  if (typeof word !== 'string') throw usageError(`${source}: kind: expected one of ${KIND_WORDS}`);
  const kind = kindOf(word);
  if (!kind) throw usageError(`${source}: kind: unknown kind "${word}"; expected one of ${KIND_WORDS}`);
  if (typeof body.name !== 'string' || body.name === '') throw usageError(`${source}: name: expected a non-empty string`);
  return { kind, name: body.name, body, source };
}

/** Every document of the path, checked, in apply order (profiles, pools, automations; files and documents in order). */
export function readResources(path: string): ResourceDoc[] {
  const docs: ResourceDoc[] = [];
  for (const file of resourceFiles(path)) {
    const values = parseFile(file);
    values.forEach((v, i) => docs.push(toDoc(v, values.length > 1 ? `${file}#${i + 1}` : file)));
  }
  const seen = new Map<string, string>();
  for (const d of docs) {
    const key = `${d.kind.kind}/${d.name}`;
    if (seen.has(key)) throw usageError(`${d.source}: ${key} is also in ${seen.get(key)}`);
    seen.set(key, d.source);
  }
  const order = (d: ResourceDoc) => KINDS.indexOf(d.kind);
  return docs.map((d, i) => ({ d, i })).sort((a, b) => order(a.d) - order(b.d) || a.i - b.i).map(({ d }) => d);
}
