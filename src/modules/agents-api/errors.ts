import type { Context, Hono } from 'hono';
import { toHttpError } from '../../shared/http.ts';

/**
 * The /v1 error surface: the OpenAI-style body `{"error": {message, type, param, code}}` that the official SDK parses
 * into its error classes (spec §6.1). The same AppError thrown by services maps here once.
 */
const TYPE_BY_STATUS: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'insufficient_quota',
  403: 'permission_denied_error',
  404: 'not_found_error',
  409: 'conflict_error',
  413: 'invalid_request_error',
  422: 'invalid_request_error',
  429: 'rate_limit_exceeded',
};

export function openAiError(status: number, message: string, opts: { code?: string | null; param?: string | null; type?: string } = {}) {
  return {
    error: {
      message,
      type: opts.type ?? TYPE_BY_STATUS[status] ?? (status >= 500 ? 'server_error' : 'invalid_request_error'),
      param: opts.param ?? null,
      code: opts.code ?? null,
    },
  };
}

/** `field: problem` messages name their parameter; surface it as `param` too. */
function paramOf(message: string): string | null {
  const m = /^([A-Za-z_][\w.[\]]*): /.exec(message);
  return m ? m[1] : null;
}

export function useOpenAiErrors(app: Hono<any>): void {
  app.onError((err, c: Context) => {
    const { status, message, error } = toHttpError(err);
    if (error?.headers) for (const [k, v] of Object.entries(error.headers)) c.header(k, v);
    const param = (error?.extra?.param as string | undefined) ?? paramOf(message);
    return c.json(openAiError(status, message, { code: error?.code ?? null, param }), status as 400);
  });
}

/**
 * The 404 of a path (or method) no `/v1` route serves. A catch-all route, registered after every other: Hono does not
 * carry a sub-app's `notFound` across `app.route()`, so the root's `{"error": "…"}` answer would reach the SDK.
 */
export function answerUnknownRoutes(app: Hono<any>): void {
  app.all('*', (c) => c.json(openAiError(404, `Unknown route: ${c.req.method} ${c.req.path}`), 404));
}
