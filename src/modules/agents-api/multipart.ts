import type { Context } from 'hono';
import { badRequest } from '../../shared/errors.ts';

/**
 * Multipart bodies of `POST /files`, `POST /skills` and `POST /skills/{id}/versions`, read with the platform's own
 * FormData parser. Parts keep their order; a part's filename keeps its relative directories (the skills upload relies
 * on `my-skill/SKILL.md`).
 */
export type Parts = Map<string, Array<string | File>>;

export function isMultipart(c: Context): boolean {
  return /^multipart\/form-data\b/i.test(c.req.header('content-type') ?? '');
}

export async function readParts(c: Context): Promise<Parts> {
  let form: FormData;
  try {
    form = await c.req.formData();
  } catch {
    throw badRequest('body: malformed multipart/form-data');
  }
  const parts: Parts = new Map();
  for (const [name, value] of form.entries()) {
    const list = parts.get(name) ?? [];
    list.push(value);
    parts.set(name, list);
  }
  return parts;
}

/** The single text field `name`, or undefined. Repeated or file-valued fields are 400s naming the field. */
export function textField(parts: Parts, name: string): string | undefined {
  const values = parts.get(name);
  if (!values || values.length === 0) return undefined;
  if (values.length > 1) throw badRequest(`${name}: expected a single value`);
  const [value] = values;
  if (typeof value !== 'string') throw badRequest(`${name}: expected a text field, received a file`);
  return value;
}

/** The file parts under any of `names`, in order. Text values under those names are 400s. */
export function fileParts(parts: Parts, ...names: string[]): File[] {
  const files: File[] = [];
  for (const name of names) {
    for (const value of parts.get(name) ?? []) {
      if (typeof value === 'string') throw badRequest(`${name}: expected a file part, received a text field`);
      files.push(value);
    }
  }
  return files;
}
