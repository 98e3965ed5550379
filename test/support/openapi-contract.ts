import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { expect } from 'vitest';

/**
 * The contract check of the API reference: a real answer's body against the response schema /openapi.json documents
 * for that operation and status, with ajv (JSON Schema 2020-12, OpenAPI 3.1's dialect). `#/components/…` references
 * resolve in the document itself. Formats are not checked (the reference names them for readers); types, required
 * fields, enums and nesting are.
 */
export interface OpenApiDocument {
  paths: Record<string, Record<string, { responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> }>>;
  components?: Record<string, unknown>;
}

const DOC_ID = 'https://svc.invalid/openapi.json';
const compiled = new WeakMap<OpenApiDocument, { ajv: Ajv2020; fns: Map<string, ValidateFunction> }>();

/** References to the document's components, made absolute so the schema compiles on its own. */
function anchored(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(anchored);
  if (!node || typeof node !== 'object') return node;
  return Object.fromEntries(Object.entries(node).map(([k, val]) => [k, k === '$ref' && typeof val === 'string' && val.startsWith('#/') ? DOC_ID + val : anchored(val)]));
}

/** The documented JSON schema of one answer, or a reason it has none. */
export function documentedSchema(spec: OpenApiDocument, method: string, openApiPath: string, status: number): { schema: unknown } | { missing: string } {
  const op = spec.paths[openApiPath]?.[method.toLowerCase()];
  if (!op) return { missing: `${method.toUpperCase()} ${openApiPath} is not in the reference` };
  const answer = op.responses?.[String(status)];
  if (!answer) return { missing: `${method.toUpperCase()} ${openApiPath} documents no ${status} answer (it documents ${Object.keys(op.responses ?? {}).join(', ')})` };
  const schema = answer.content?.['application/json']?.schema;
  if (!schema) return { missing: `${method.toUpperCase()} ${openApiPath} documents no JSON schema for its ${status} answer` };
  return { schema };
}

/**
 * Fails (naming the operation, the status and each mismatch with its place in the body) unless `body` is what the
 * reference says `method openApiPath` answers with `status`.
 */
export function expectAnswerDocumented(spec: OpenApiDocument, method: string, openApiPath: string, status: number, body: unknown): void {
  const found = documentedSchema(spec, method, openApiPath, status);
  if ('missing' in found) expect.fail(found.missing);
  let state = compiled.get(spec);
  if (!state) {
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
    ajv.addSchema({ $id: DOC_ID, components: anchored(spec.components ?? {}) });
    compiled.set(spec, (state = { ajv, fns: new Map() }));
  }
  const key = `${method.toUpperCase()} ${openApiPath} ${status}`;
  let validate = state.fns.get(key);
  if (!validate) state.fns.set(key, (validate = state.ajv.compile(anchored(found.schema) as object)));
  if (!validate(body)) {
    const problems = (validate.errors ?? []).map((e) => `${e.instancePath || '(body)'} ${e.message ?? ''}${e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : ''}`);
    expect.fail(`${key}: the answer does not match the documented schema:\n  ${problems.join('\n  ')}\nbody: ${JSON.stringify(body).slice(0, 1500)}`);
  }
}
