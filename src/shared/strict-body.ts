import * as v from 'valibot';
import { badRequest } from './errors.ts';
import { closest } from './suggest.ts';

/**
 * Unknown fields in a request body, found by walking the body beside the valibot schema the route reads it with.
 * valibot's `object` drops keys it does not know, so a typo (`instructions` for `systemPrompt`) used to be answered
 * 201 and silently lost; `/api` routes now answer 400 naming each unknown field with the nearest known one
 * (http.ts readJson, switched on for `/api/*` by `strictJsonBodies`). Kept open on purpose: `looseObject` schemas,
 * records and free-form JSON values (a profile's `fs`, metadata).
 *
 * Fields a GET answers but a write does not take (ids, timestamps, computed fields such as a profile's
 * `workerPlacement`) are declared with `readOnly()`: accepted and dropped before validation, so what a GET returned
 * can be sent back as it is.
 */
const READ_ONLY = Symbol.for('svc.readOnly');

/** A field a GET answers and a write ignores (dropped before the body is validated). */
export function readOnly(what = 'returned by reads; ignored on write') {
  const schema = v.optional(v.pipe(v.unknown(), v.description(`Read-only: ${what}`)));
  // the mark is for the walk below only: its type stays the plain schema's, so the schemas' declarations need not name it
  return Object.assign(schema, { [READ_ONLY]: true as const }) as typeof schema;
}

/** `readOnly()` for each name: spread into an object schema's entries. */
export function readOnlyFields<const K extends string>(...names: K[]): Record<K, ReturnType<typeof readOnly>> {
  return Object.fromEntries(names.map((n) => [n, readOnly()])) as Record<K, ReturnType<typeof readOnly>>;
}

export interface UnknownField {
  /** Dot path, as valibot names fields in its issues (`mcpServers.0.urll`). */
  path: string;
  suggestion: string | undefined;
}

interface Node {
  type: string;
  entries?: Record<string, Node>;
  wrapped?: Node;
  item?: Node;
  value?: Node;
  rest?: Node;
  options?: Node[];
  getter?: (input: unknown) => Node;
  [READ_ONLY]?: true;
}

const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/**
 * Drops the read-only fields of `value` (in place) and, with `strict`, returns the fields `schema` does not know.
 * Without `strict` the unknown fields are left to the schema (valibot's `object` drops them).
 */
export function checkFields(schema: v.GenericSchema, value: unknown, strict: boolean): UnknownField[] {
  const out: UnknownField[] = [];
  walk(schema as unknown as Node, value, [], out, true);
  return strict ? out : [];
}

/** The schema under optional, nullable and lazy wrappers. */
function unwrapped(node: Node | undefined, value: unknown): Node | undefined {
  while (node && (node.wrapped || node.getter)) node = node.wrapped ?? node.getter!(value);
  return node;
}

function walk(node: Node | undefined, value: unknown, path: Array<string | number>, out: UnknownField[], mutate: boolean): void {
  node = unwrapped(node, value);
  if (!node || value === null || value === undefined) return;
  switch (node.type) {
    case 'object':
    case 'strict_object':
    case 'loose_object':
    case 'object_with_rest': {
      if (!isRecord(value)) return;
      const entries = node.entries ?? {};
      for (const key of Object.keys(value)) {
        const entry = Object.hasOwn(entries, key) ? entries[key] : undefined;
        if (entry?.[READ_ONLY]) {
          if (mutate) delete value[key];
        } else if (entry) walk(entry, value[key], [...path, key], out, mutate);
        else if (node.type === 'object_with_rest') walk(node.rest, value[key], [...path, key], out, mutate);
        else if (node.type !== 'loose_object') {
          const known = Object.keys(entries).filter((k) => !entries[k]![READ_ONLY]);
          out.push({ path: [...path, key].join('.'), suggestion: closest(key, known) });
        }
      }
      return;
    }
    case 'array':
      if (Array.isArray(value)) value.forEach((item, i) => walk(node.item, item, [...path, i], out, mutate));
      return;
    case 'record':
      if (isRecord(value)) for (const [k, item] of Object.entries(value)) walk(node.value, item, [...path, k], out, mutate);
      return;
    case 'union':
    case 'variant': {
      // the option valibot takes (the first that accepts the value), else the one the value is least foreign to
      const options = node.options ?? [];
      let pick = options.find((o) => v.is(o as unknown as v.GenericSchema, value));
      if (!pick) {
        let fewest = Infinity;
        for (const o of options) {
          const trial: UnknownField[] = [];
          walk(o, value, path, trial, false);
          if (trial.length < fewest) [pick, fewest] = [o, trial.length];
        }
      }
      walk(pick, value, path, out, mutate);
      return;
    }
    case 'intersect': {
      // one object of every option's fields: each option alone would call the others' fields unknown
      const entries = Object.assign({}, ...(node.options ?? []).map((o) => unwrapped(o, value)?.entries ?? {})) as Record<string, Node>;
      walk({ type: 'object', entries }, value, path, out, mutate);
      return;
    }
    default:
  }
}

/** `a: unknown field (did you mean b?); c: unknown field`. */
export function describeUnknown(fields: readonly UnknownField[]): string {
  return fields.map((f) => `${f.path}: unknown field${f.suggestion ? ` (did you mean ${f.suggestion}?)` : ''}`).join('; ');
}

/**
 * A field that names what a write addresses (a pod's `name`, a store's `scope`): a GET's answer sends it back as it
 * was, which is accepted; a different value would read as a rename the server does not do, so it is a 400.
 */
export function assertUnchanged(field: string, given: unknown, current: unknown, why: string): void {
  if (given !== undefined && given !== current) throw badRequest(`${field}: ${why}`);
}
