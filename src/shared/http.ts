import * as v from 'valibot';
import type { Context, Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { AppError, badRequest, describeError } from './errors.ts';
import { createLogger } from './log.ts';

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

/** Describes the first valibot issue as `<field>: <problem>`. */
export function describeIssues(issues: readonly v.BaseIssue<unknown>[]): string {
  const issue = issues[0];
  const path = v.getDotPath(issue);
  const expected = issue.type !== 'custom' && issue.expected ? `expected ${issue.expected}` : issue.message;
  const received = issue.received && issue.received !== 'undefined' ? `, received ${issue.received}` : issue.received === 'undefined' ? ' (missing)' : '';
  return path ? `${path}: ${expected}${received}` : `body: ${expected}${received}`;
}

export function parseWith<S extends v.GenericSchema>(schema: S, value: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, value);
  if (!result.success) throw badRequest(describeIssues(result.issues));
  return result.output;
}

/** Reads the request body as JSON and validates it; malformed JSON and schema violations are 400s naming the problem. */
export async function readJson<S extends v.GenericSchema>(c: Context, schema: S): Promise<v.InferOutput<S>> {
  let body: unknown;
  const text = await c.req.text();
  if (text.trim() === '') throw badRequest('body: a JSON object is required');
  try {
    body = JSON.parse(text);
  } catch {
    throw badRequest('body: malformed JSON');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw badRequest('body: expected a JSON object');
  // PostgreSQL text cannot hold NUL; refuse it here with a clear message rather than failing in the database.
  if (text.includes('\\u0000')) throw badRequest('body: NUL characters (\\u0000) are not allowed in strings');
  return parseWith(schema, body);
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

/** Maps any thrown value to a status and message; unexpected errors are logged and hidden from the client. */
export function toHttpError(err: unknown): { status: number; message: string; error: AppError | undefined } {
  if (err instanceof AppError) return { status: err.status, message: err.message, error: err };
  if (err instanceof HTTPException) return { status: err.status, message: err.message || 'request rejected', error: undefined };
  if (err instanceof SyntaxError) return { status: 400, message: 'body: malformed JSON', error: undefined };
  // PostgreSQL data exceptions (class 22: bad encoding, out of range, invalid text) come from client input.
  const code = (err as { code?: unknown })?.code;
  if (typeof code === 'string' && /^22[0-9A-Z]{3}$/.test(code)) return { status: 400, message: `invalid input: ${(err as Error).message}`, error: undefined };
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
