import * as v from 'valibot';
import type { Context, Hono, MiddlewareHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { AppError, badRequest, describeError } from './errors.ts';
import { createLogger } from './log.ts';
import { checkFields, describeUnknown } from './strict-body.ts';

/**
 * HTTP helpers shared by every surface: reading a validated JSON body, naming the offending field in 400s, and the
 * `{"error": "…"}` mapping used by /api, the runner and the worker.
 */
const log = createLogger('http');

/** A JSON object (valibot's record also admits arrays). */
export const JsonObject = v.custom<Record<string, unknown>>(
  (x) => typeof x === 'object' && x !== null && !Array.isArray(x),
  'expected a JSON object',
);

/**
 * Describes the first valibot issue as `<field>: <problem>`, in words a caller can act on: a missing field says it is
 * required and what it takes (with `schema`, the field's allowed values or form), a failed check names the value it
 * got (valibot's `received` there is the whole enclosing object: "Object").
 */
/** Field names whose values are never repeated back in an error. */
const SECRET_FIELD = /key|token|secret|password|credential|authorization/i;

export function describeIssues(issues: readonly v.BaseIssue<unknown>[], schema?: v.GenericSchema): string {
  const issue = issues[0];
  const path = v.getDotPath(issue);
  const last = issue.path?.at(-1);
  let problem: string;
  if (issue.received === 'undefined' && last?.key !== undefined && issue.expected === `"${String(last.key)}"`) {
    const hint = schema ? entryHint(schemaAt(schema, issue.path!.map((p) => p.key))) : undefined;
    problem = hint ? `required, ${hint}` : 'required';
  } else if (issue.expected === 'never' && last?.key !== undefined && !issue.message.startsWith('Invalid ')) {
    // an unknown field of a strict object whose schema says what it allows (`unknown limit; allowed: …`): the path names it
    problem = issue.message;
  } else if (issue.type === 'custom' || !issue.expected) {
    // never echo what may be a credential (a provider key, a token) into an answer or a log
    const secret = last !== undefined && SECRET_FIELD.test(String(last.key));
    problem = last && last.value !== undefined && !secret ? `${issue.message}; received ${shortJson(last.value)}` : issue.message;
  } else {
    problem = `expected ${issue.expected}${issue.received && issue.received !== 'undefined' ? `, received ${issue.received}` : issue.received === 'undefined' ? ' (missing)' : ''}`;
  }
  return `${path || 'body'}: ${problem}`;
}

type SchemaNode = { type?: string; entries?: Record<string, SchemaNode>; wrapped?: SchemaNode; item?: SchemaNode; options?: unknown[]; message?: unknown; expected?: string };

/** The schema a path of keys leads to through objects, optional wrappers and arrays (undefined where it cannot tell). */
function schemaAt(schema: v.GenericSchema, keys: unknown[]): SchemaNode | undefined {
  let node: SchemaNode | undefined = schema as SchemaNode;
  for (const key of keys) {
    while (node?.wrapped) node = node.wrapped;
    node = typeof key === 'number' ? node?.item : node?.entries?.[String(key)];
  }
  while (node?.wrapped) node = node.wrapped;
  return node;
}

function entryHint(node: SchemaNode | undefined): string | undefined {
  if (!node) return undefined;
  if (node.type === 'picklist' && node.options) return `one of ${node.options.join(', ')}`;
  if (typeof node.message === 'string') return node.message;
  return node.expected ? `expected ${node.expected}` : undefined;
}

function shortJson(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/**
 * Validates `value` with `schema`; its read-only fields (strict-body.ts `readOnly`) are dropped first. With `strict`,
 * a field the schema does not know is a 400 naming it (and the nearest known one) instead of being dropped.
 */
export function parseWith<S extends v.GenericSchema>(schema: S, value: unknown, opts: { strict?: boolean } = {}): v.InferOutput<S> {
  const unknown = checkFields(schema, value, opts.strict ?? false);
  if (unknown.length) throw badRequest(describeUnknown(unknown));
  const result = v.safeParse(schema, value);
  if (!result.success) throw badRequest(describeIssues(result.issues, schema));
  return result.output;
}

/**
 * How deep a JSON body may nest (objects and arrays, the body itself being level 1). Checked on the text before
 * anything recurses over the value: valibot, `JSON.stringify` (jsonb) and the drivers all recurse and overflow the
 * stack a few thousand levels down. Real bodies stay far below it: a tool's JSON schema nesting 25 properties deep is
 * 52 levels of a /v1 body.
 */
export const JSON_MAX_DEPTH = 64;
/** Bodies between roles carry client values a few levels further down (a profile's `fs` inside `{profile}`). */
export const INTERNAL_JSON_MAX_DEPTH = JSON_MAX_DEPTH + 16;

/** True when `text` nests objects and arrays deeper than `max`; strings are skipped, so `"[[["` does not count. */
export function jsonNestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c) i++; // backslash: skip the escaped character
      else if (ch === 0x22) inString = false;
    } else if (ch === 0x22) inString = true;
    else if (ch === 0x7b || ch === 0x5b) {
      if (++depth > max) return true;
    } else if (ch === 0x7d || ch === 0x5d) depth--;
  }
  return false;
}

/**
 * Parses the text of a JSON request body: every JSON body of every surface goes through here, so the nesting limit
 * holds for new routes too. Malformed or over-deep JSON is a 400 naming the problem. A NUL or a lone surrogate in a
 * string is text like any other: the storage encoding keeps it (db/storable.ts), as it keeps what agents print.
 */
export function parseJsonBody(text: string, maxDepth = JSON_MAX_DEPTH): unknown {
  if (jsonNestsDeeperThan(text, maxDepth)) throw badRequest(`body: JSON nested deeper than ${maxDepth} levels`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw badRequest('body: malformed JSON');
  }
  return body;
}

/** The context variable strictJsonBodies sets (a variable, not the Request: body limits replace the Request). */
const STRICT = 'svc.strictJsonBody';

/**
 * Makes the JSON bodies of the requests it sees strict (parseWith): mounted once on `/api/*` by the composition root,
 * so every /api route that reads its body with readJson or readJsonWith refuses unknown fields, new routes included.
 * The /v1 agents API, the chat gateway and the calls between roles stay lenient: the `openai` SDK and other versions
 * of svc send fields a route may not know.
 */
export function strictJsonBodies(): MiddlewareHandler {
  return async (c, next) => {
    c.set(STRICT, true);
    await next();
  };
}

/** Whether this request's JSON body must not carry unknown fields (strictJsonBodies). */
export const isStrictBody = (c: Context): boolean => c.get(STRICT) === true;

/** Validates an already parsed body the way readJson does (strict on /api): for routes that read the text themselves. */
export function readJsonWith<S extends v.GenericSchema>(c: Context, schema: S, body: unknown): v.InferOutput<S> {
  return parseWith(schema, body, { strict: isStrictBody(c) });
}

/** Reads the request body as JSON and validates it; malformed JSON, unknown fields (on /api) and schema violations are 400s naming the problem. */
export async function readJson<S extends v.GenericSchema>(c: Context, schema: S, opts: { maxDepth?: number } = {}): Promise<v.InferOutput<S>> {
  const text = await c.req.text();
  if (text.trim() === '') throw badRequest('body: a JSON object is required');
  const body = parseJsonBody(text, opts.maxDepth);
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw badRequest('body: expected a JSON object');
  return readJsonWith(c, schema, body);
}

/** Reads a form body (urlencoded or multipart); a body its content type does not describe is a 400, not a 500. */
export async function readForm(c: Context): Promise<Record<string, string | File>> {
  try {
    return await c.req.parseBody();
  } catch {
    throw badRequest('body: malformed form data');
  }
}

/**
 * An answer that leaves the request body unread (a 401 or 403 before the body, a 413, a route that ignores its body)
 * would leave the client's upload stuck in the connection: the HTTP server drains it only briefly after the answer,
 * so a client still sending, or reusing the connection, had its request cut off. The rest of the body is read and
 * dropped before the answer leaves, up to `maxBytes` and `maxMs`; past either, the answer closes the connection.
 */
export function drainUnreadBody(opts: { maxBytes: number; maxMs: number }): MiddlewareHandler {
  return async (c, next) => {
    await next();
    const body = c.req.raw.body;
    if (body === null || c.req.raw.bodyUsed || c.res.headers.get('connection') === 'close') return;
    const declared = Number(c.req.header('content-length'));
    if ((Number.isFinite(declared) && declared > opts.maxBytes) || !(await discard(body, opts))) {
      try {
        c.res.headers.set('Connection', 'close');
      } catch {
        // a proxied response's headers are immutable; it goes out as it is
      }
    }
  };
}

/** Reads a body to its end and drops it; false when it was longer than `maxBytes`, slower than `maxMs` or broken. */
async function discard(body: ReadableStream<Uint8Array>, opts: { maxBytes: number; maxMs: number }): Promise<boolean> {
  if (body.locked) return false; // a handler holds it (a stream it forwards): not ours to read
  const reader = body.getReader();
  let late = false;
  const timer = setTimeout(() => {
    late = true;
    void reader.cancel().catch(() => {});
  }, opts.maxMs);
  try {
    for (let bytes = 0; ; ) {
      const { done, value } = await reader.read();
      if (done) return !late;
      bytes += value.byteLength;
      if (bytes > opts.maxBytes) {
        await reader.cancel().catch(() => {});
        return false;
      }
    }
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/** Query parameters `limit` and `offset`, validated; undefined when absent. */
export function readPaging(c: Context, max = 1000): { limit: number | undefined; offset: number } {
  const rawLimit = c.req.query('limit');
  const rawOffset = c.req.query('offset');
  const num = (name: string, raw: string | undefined, min: number, upper: number) => {
    if (raw === undefined || raw === '') return undefined;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > upper) throw badRequest(`${name}: expected an integer from ${min} to ${upper}`);
    return n;
  };
  return { limit: num('limit', rawLimit, 1, max), offset: num('offset', rawOffset, 0, Number.MAX_SAFE_INTEGER) ?? 0 };
}

const DATABASE_UNAVAILABLE = new AppError(503, 'database unavailable', { headers: { 'Retry-After': '1' } });

/**
 * The database went away under the request: a connection closed or refused (PostgreSQL restarting, a failover, the
 * network), or PostgreSQL shutting down or still starting (SQLSTATE class 08, 57P01-57P03). postgres.js names its own
 * connection errors in `code`; a refused connect is Node's error of the `connect` call; a connection reset under a
 * statement (PostgreSQL killed mid-query) is the socket's own error, which postgres.js hands over with the `query`
 * it failed. Also the database handle closed under a request still running as the server stops (Kysely's error once
 * its driver is destroyed: a request that outlived the stop's grace period).
 */
function lostDatabase(err: unknown): boolean {
  if (err instanceof Error && err.message === 'driver has already been destroyed') return true;
  const e = err as { code?: unknown; syscall?: unknown; severity?: unknown } | undefined;
  if (typeof e?.code !== 'string') return false;
  if (/^CONNECT(ION_CLOSED|ION_DESTROYED|ION_ENDED|_TIMEOUT)$/.test(e.code)) return true;
  if (e.syscall === 'connect' && /^(ECONNREFUSED|ENOENT|ECONNRESET)$/.test(e.code)) return true;
  if ((e.syscall === 'read' || e.syscall === 'write') && /^(ECONNRESET|EPIPE)$/.test(e.code) && 'query' in e) return true;
  return typeof e.severity === 'string' && /^(08[0-9A-Z]{3}|57P0[123])$/.test(e.code);
}

/** Maps any thrown value to a status and message; unexpected errors are logged and hidden from the client. */
export function toHttpError(err: unknown): { status: number; message: string; error: AppError | undefined } {
  if (err instanceof AppError) return { status: err.status, message: err.message, error: err };
  if (err instanceof HTTPException) return { status: err.status, message: err.message || 'request rejected', error: undefined };
  if (err instanceof SyntaxError) return { status: 400, message: 'body: malformed JSON', error: undefined };
  // PostgreSQL data exceptions (class 22: bad encoding, out of range, invalid text) come from client input.
  const code = (err as { code?: unknown })?.code;
  if (typeof code === 'string' && /^22[0-9A-Z]{3}$/.test(code)) return { status: 400, message: `invalid input: ${(err as Error).message}`, error: undefined };
  if (lostDatabase(err)) {
    log.warn('database unavailable', { error: describeError(err) });
    return { status: 503, message: 'database unavailable (restarting or unreachable); retry shortly', error: DATABASE_UNAVAILABLE };
  }
  log.error('unhandled error', { error: describeError(err), stack: err instanceof Error ? err.stack : undefined });
  return { status: 500, message: 'internal error', error: undefined };
}

/** Installs the `{"error": string}` error and not-found handlers on an app. */
export function useJsonErrors(app: Hono<any>): void {
  app.onError((err, c) => {
    const { status, message, error } = toHttpError(err);
    if (error?.headers) for (const [k, val] of Object.entries(error.headers)) c.header(k, val);
    return c.json({ error: message, ...error?.extra }, status as 400);
  });
  app.notFound((c) => c.json({ error: `no route for ${c.req.method} ${new URL(c.req.url).pathname}` }, 404));
}
