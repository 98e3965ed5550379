import { toJsonSchema } from '@valibot/to-json-schema';
import type { Hono } from 'hono';
import type * as v from 'valibot';
import { routeDocOf, type RouteDoc } from '../../shared/route-doc.ts';

/**
 * The OpenAPI 3.1 document of what this process serves on its public port, generated from the assembled app: every
 * route under the documented prefixes (method and path from Hono's route table, path parameters from the path), with
 * what a route declares with `doc()` (shared/route-doc.ts): summary, description, query and request-body JSON Schema
 * converted from the valibot schemas it validates with, its answer's schema and status, and its errors. Nothing here is
 * written by hand per route.
 */
export const DOCUMENTED_PREFIXES = ['/api/', '/v1/', '/chat/'] as const;

const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);

export interface Operation {
  method: string;
  /** OpenAPI form: `/api/runs/{id}`. */
  path: string;
  /** Hono form: `/api/runs/:id`. */
  route: string;
  doc: RouteDoc;
}

/** Hono's `/a/:id{[0-9]+}/*` → OpenAPI's `/a/{id}/{path}`, with the parameter names. */
export function openApiPath(route: string): { path: string; params: string[] } {
  const params: string[] = [];
  const path = route
    .split('/')
    .map((seg) => {
      const m = /^:([A-Za-z0-9_]+)(\{.*\})?\??$/.exec(seg);
      if (m) {
        params.push(m[1]!);
        return `{${m[1]}}`;
      }
      if (seg === '*') {
        params.push('path');
        return '{path}';
      }
      return seg;
    })
    .join('/');
  return { path, params };
}

/** A route the reference documents: under a documented prefix, one method (or an endpoint that takes them all). */
const documented = (r: { method: string; path: string }) =>
  DOCUMENTED_PREFIXES.some((p) => r.path.startsWith(p)) && (METHODS.has(r.method) || (r.method === 'ALL' && !r.path.endsWith('*')));

/** Whether the app serves anything the reference documents (asked at boot: cheaper than operationsOf). */
export function hasOperations(app: Hono): boolean {
  return app.routes.some(documented);
}

/** The documented operations of `app`: one per method and path; `ALL` handlers that are endpoints (MCP) as POST. */
export function operationsOf(app: Hono): Operation[] {
  const ops = new Map<string, Operation>();
  const docs = new Map<string, RouteDoc>();
  for (const r of app.routes) {
    if (!documented(r)) continue;
    const endpointAll = r.method === 'ALL' && !r.path.endsWith('*');
    const method = endpointAll ? 'POST' : r.method;
    const key = `${method} ${r.path}`;
    const meta = routeDocOf(r.handler);
    if (meta) docs.set(key, { ...docs.get(key), ...meta });
    if (!ops.has(key)) ops.set(key, { method, route: r.path, path: openApiPath(r.path).path, doc: {} });
  }
  for (const [key, op] of ops) op.doc = docs.get(key) ?? {};
  return [...ops.values()];
}

type Json = Record<string, unknown>;

/** The definitions hoisted to the document's components: by name, and each name by its definition's text. */
interface Definitions {
  schemas: Json;
  named: Map<string, string>;
}

/**
 * A valibot schema as JSON Schema 2020-12 (OpenAPI 3.1's dialect). Transforms and checks JSON Schema cannot say are
 * left out rather than failing the whole document. Definitions (recursive schemas: the converter numbers them per
 * schema) move to the document's components under names unique in the document, where a `#/…` reference resolves; an
 * identical definition is kept once. A response's objects never forbid extra keys: an answer may gain fields without
 * breaking a client that checks it against the reference.
 */
function jsonSchema(schema: v.GenericSchema, use: 'request' | 'response', defs: Definitions): Json {
  const { $schema: _dialect, $defs = {}, ...converted } = toJsonSchema(schema, { errorMode: 'ignore', target: 'draft-2020-12' }) as Json & { $defs?: Json };
  const names = new Map<string, string>();
  for (const [local, def] of Object.entries($defs)) {
    const text = JSON.stringify([use, def]);
    if (!defs.named.has(text)) defs.named.set(text, `Definition${defs.named.size + 1}`);
    names.set(local, defs.named.get(text)!);
  }
  const fix = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(fix);
    if (!node || typeof node !== 'object') return node;
    const out: Json = {};
    for (const [k, val] of Object.entries(node)) {
      if (k === '$ref' && typeof val === 'string' && val.startsWith('#/$defs/')) out[k] = `#/components/schemas/${names.get(val.slice('#/$defs/'.length))}`;
      else if (k === 'additionalProperties' && val === false && use === 'response') continue;
      else out[k] = fix(val);
    }
    return out;
  };
  for (const [local, name] of names) defs.schemas[name] ??= fix($defs[local]);
  return fix(converted) as Json;
}

/** A multipart body's JSON Schema (OpenAPI 3.1: a file part is a string with `contentMediaType`). */
function formSchema(form: NonNullable<RouteDoc['form']>): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  for (const [name, part] of Object.entries(form)) {
    const one = part.file ? { type: 'string', contentMediaType: 'application/octet-stream', description: part.description } : { type: 'string', description: part.description };
    properties[name] = part.multiple ? { type: 'array', items: one, description: part.description } : one;
    if (part.required) required.push(name);
  }
  return { type: 'object', properties, ...(required.length ? { required } : {}) };
}

const ERROR_TEXT: Record<number, string> = {
  400: 'The request is invalid: the error names the field and the problem',
  401: 'No credentials, or credentials that are not valid',
  402: 'The tenant has no credits left',
  403: 'The credentials may not do this',
  404: 'No such resource for this tenant',
  409: 'The resource is not in a state that allows this',
  410: 'The resource is gone',
  413: 'The body is too large',
  415: 'The body is not JSON',
  422: 'The request is understood but cannot be carried out',
  429: 'Too many requests: Retry-After says when to try again',
  501: 'Not implemented by this server',
  502: 'An upstream service failed',
  503: 'The service is not available now (see the error)',
};

/** The documented answers of an operation: its success answer, then its errors, each with the error body. */
function responsesOf(op: Operation, hasParams: boolean, defs: Definitions): Record<string, unknown> {
  const { doc: d } = op;
  const status = d.status ?? 200;
  const media = d.responds ?? 'application/json';
  const success: Record<string, unknown> = {
    description: d.responds === 'text/event-stream' ? 'A server-sent event stream' : status === 204 ? 'Done; no body' : status === 302 ? 'A redirect' : (d.summary ?? 'The answer'),
  };
  if (status !== 204 && status !== 302) success.content = { [media]: d.response ? { schema: jsonSchema(d.response, 'response', defs) } : {} };
  const errors = new Set<number>(d.errors ?? []);
  if (d.body || d.form || d.query) errors.add(400);
  // every JSON body under /api and /v1 passes the server's body size limit first
  if ((d.body || d.form) && !op.path.startsWith('/chat/')) errors.add(413);
  if (!op.path.startsWith('/chat/') && !d.public) {
    errors.add(401);
    // a viewer's key may only read: every change on /api and /v1 can answer 403
    if (op.method !== 'GET') errors.add(403);
  }
  if (hasParams) errors.add(404);
  // the /v1 API and the Chat Completions face of a published agent answer errors in the OpenAI shape
  const errorRef = op.path.startsWith('/v1/') || /^\/chat\/[^/]+\/v1\//.test(op.path) ? '#/components/schemas/AgentsError' : '#/components/schemas/Error';
  const responses: Record<string, unknown> = { [String(status)]: success };
  for (const [code, other] of Object.entries(d.alsoAnswers ?? {})) {
    responses[code] = { description: other.description, content: { 'application/json': { schema: jsonSchema(other.response, 'response', defs) } } };
  }
  for (const code of [...errors].sort((a, b) => a - b)) {
    responses[String(code)] = { description: ERROR_TEXT[code] ?? 'An error', content: { 'application/json': { schema: { $ref: errorRef } } } };
  }
  return responses;
}

export function buildOpenApi(app: Hono, version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const defs: Definitions = { schemas: {}, named: new Map() };
  for (const op of operationsOf(app)) {
    const { params } = openApiPath(op.route);
    const tag = op.path.split('/').slice(1, 3).join('/');
    const operation: Record<string, unknown> = {
      operationId: `${op.method.toLowerCase()}${op.path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? '').toUpperCase())}`,
      tags: [tag],
      ...(op.doc.summary ? { summary: op.doc.summary } : {}),
      ...(op.doc.description ? { description: op.doc.description } : {}),
      ...(params.length ? { parameters: params.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } })) } : {}),
      ...(op.doc.body ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(op.doc.body, 'request', defs) } } } } : {}),
      ...(op.doc.form ? { requestBody: { required: true, content: { 'multipart/form-data': { schema: formSchema(op.doc.form) } } } } : {}),
      responses: responsesOf(op, params.length > 0, defs),
      security: op.doc.public ? [] : op.path.startsWith('/chat/') ? [{ agentKey: [] }] : [{ apiKey: [] }],
    };
    if (op.doc.query) {
      const q = jsonSchema(op.doc.query, 'request', defs) as { properties?: Record<string, unknown>; required?: string[] };
      const query = Object.entries(q.properties ?? {}).map(([name, schema]) => ({ name, in: 'query', required: q.required?.includes(name) ?? false, schema }));
      operation.parameters = [...((operation.parameters as unknown[]) ?? []), ...query];
    }
    (paths[op.path] ??= {})[op.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    info: { title: 'svc', version, description: 'Self-hostable agent orchestration: the /api control plane, the /v1 agents API and the /chat gateway of published agents.' },
    servers: [{ url: '/' }],
    components: {
      schemas: {
        ...defs.schemas,
        Error: { type: 'object', required: ['error'], properties: { error: { type: 'string', description: 'What went wrong, naming the field or resource' } } },
        AgentsError: {
          type: 'object',
          required: ['error'],
          properties: { error: { type: 'object', required: ['message'], properties: { message: { type: 'string' }, type: { type: 'string' }, code: { type: ['string', 'null'] }, param: { type: ['string', 'null'] } } } },
        },
      },
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'An API key (`ao_…`), a run token or a JWT' },
        agentKey: { type: 'http', scheme: 'bearer', description: 'A published agent’s key (`pk_…`); public agents need none' },
      },
    },
    paths,
  };
}
