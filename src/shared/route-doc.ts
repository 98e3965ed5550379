import type { MiddlewareHandler } from 'hono';
import type * as v from 'valibot';

/**
 * What a route tells the API reference about itself. `doc({ summary, body: Schema })` goes in the route's handler list
 * (`app.post('/', doc({ body: RunBody }), handler)`): it does nothing at request time; the OpenAPI generator finds it
 * among the app's routes and turns `body` (the valibot schema the handler reads the body with) into the request body's
 * JSON Schema, and `response` (the schema of what the handler answers) into the success answer's. Every operation under
 * /api, /v1 and /chat needs a summary, a description and, for a JSON answer, its schema (test/flows/openapi.test.ts).
 */
export interface RouteDoc {
  summary?: string;
  description?: string;
  /** The request body's schema (JSON). */
  body?: v.GenericSchema;
  /**
   * A multipart/form-data body instead of JSON: its parts by name, each a file (`file: true`; `multiple`: repeated
   * parts of that name) or a text field, with what it holds.
   */
  form?: Readonly<Record<string, { description: string; file?: boolean; multiple?: boolean; required?: boolean }>>;
  /** The query parameters' schema (an object schema). */
  query?: v.GenericSchema;
  /** The response's media type when it is not JSON (`text/event-stream` for streams, `text/html` for pages). */
  responds?: string;
  /** The success answer's body (JSON): the valibot schema of what the handler returns. */
  response?: v.GenericSchema;
  /** The success status: 200 unless said (201 created, 202 accepted, 204 no body, 302 a redirect). */
  status?: 200 | 201 | 202 | 204 | 302;
  /** Other success answers beside `status` (a 202 when the work goes on past the answer), each with its JSON body. */
  alsoAnswers?: Readonly<Record<number, { description: string; response: v.GenericSchema }>>;
  /**
   * Error statuses the route answers beyond those the generator adds by itself (400 where a body or query is read,
   * 413 where a body is, 401 for every authenticated route, 403 for its changes (a viewer's key only reads), 404 where
   * the path names a resource), each documented with the error body.
   */
  errors?: readonly number[];
  /**
   * The route takes no credentials (a device-login step, a provider's signed webhook, a public page's data): the
   * reference shows it without security and without the 401 and 403 answers of authenticated routes.
   */
  public?: boolean;
}

/**
 * Compiles only when `T`, the type a handler answers with, fits the documented answer schema `S`: a type alias beside
 * the route (`type _RunAnswer = Documents<typeof RunSummarySchema, RunSummary>`) keeps the two from drifting apart.
 */
export type Documents<S extends v.GenericSchema, T extends v.InferOutput<S>> = T;

export const ROUTE_DOC = Symbol.for('svc.routeDoc');

export type DocMiddleware = MiddlewareHandler & { [ROUTE_DOC]: RouteDoc };

export function doc(meta: RouteDoc): DocMiddleware {
  const mw: MiddlewareHandler = async (_c, next) => {
    await next();
  };
  return Object.assign(mw, { [ROUTE_DOC]: meta });
}

/**
 * A sub-app with its own error handler has its handlers wrapped when it is mounted; Hono keeps the original under
 * `__COMPOSED_HANDLER` (hono/utils/constants COMPOSED_HANDLER), which is followed here.
 */
export function routeDocOf(handler: unknown): RouteDoc | undefined {
  for (let h = handler; typeof h === 'function'; h = (h as { __COMPOSED_HANDLER?: unknown }).__COMPOSED_HANDLER) {
    const meta = (h as Partial<DocMiddleware>)[ROUTE_DOC];
    if (meta) return meta;
  }
  return undefined;
}
