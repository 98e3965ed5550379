import { toJsonSchema } from '@valibot/to-json-schema';
import type { Hono } from 'hono';
import type * as v from 'valibot';
import { routeDocOf, type RouteDoc } from '../../shared/route-doc.ts';

/**
 * The OpenAPI 3.1 document of what this process serves on its public port, generated from the assembled app: every
 * route under the documented prefixes (method and path from Hono's route table, path parameters from the path), with
 * the summary and request-body JSON Schema a route declares with `doc()` (doc.ts), converted from the valibot schema it
 * validates with. Nothing here is written by hand per route.
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

function jsonSchema(schema: v.GenericSchema): unknown {
  // transforms and checks JSON Schema cannot say are left out rather than failing the whole document
  return toJsonSchema(schema, { errorMode: 'ignore' });
}

export function buildOpenApi(app: Hono, version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of operationsOf(app)) {
    const { params } = openApiPath(op.route);
    const tag = op.path.split('/').slice(1, 3).join('/');
    const operation: Record<string, unknown> = {
      operationId: `${op.method.toLowerCase()}${op.path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? '').toUpperCase())}`,
      tags: [tag],
      ...(op.doc.summary ? { summary: op.doc.summary } : {}),
      ...(op.doc.description ? { description: op.doc.description } : {}),
      ...(params.length ? { parameters: params.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } })) } : {}),
      ...(op.doc.body ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(op.doc.body) } } } } : {}),
      responses: {
        default: {
          description: op.doc.responds === 'text/event-stream' ? 'A server-sent event stream' : 'The JSON answer; errors are `{"error": "…"}` (the /v1 API: `{"error": {"message", "type", "code"}}`)',
          content: { [op.doc.responds ?? 'application/json']: {} },
        },
      },
      security: op.path.startsWith('/chat/') ? [{ agentKey: [] }] : [{ apiKey: [] }],
    };
    if (op.doc.query) {
      const q = jsonSchema(op.doc.query) as { properties?: Record<string, unknown>; required?: string[] };
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
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'An API key (`ao_…`), a run token or a JWT' },
        agentKey: { type: 'http', scheme: 'bearer', description: 'A published agent’s key (`pk_…`); public agents need none' },
      },
    },
    paths,
  };
}
