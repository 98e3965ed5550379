/**
 * The one error class services throw. Each HTTP surface maps it once: /api, runner and worker answer
 * `{"error": message}`; /v1 answers the OpenAI-style error object.
 */
export class AppError extends Error {
  readonly status: number;
  /** Machine-readable code for surfaces that carry one (/v1 `code`, billing `error`). */
  readonly code: string | undefined;
  /** Extra fields merged into the JSON body (for example `checkout_path`). */
  readonly extra: Record<string, unknown> | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(
    status: number,
    message: string,
    opts: { code?: string; extra?: Record<string, unknown>; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'AppError';
    this.status = status;
    this.code = opts.code;
    this.extra = opts.extra;
    this.headers = opts.headers;
  }
}

/**
 * A problem with how svc was set up that the operator fixes (a folder the database user cannot reach): `svc` prints
 * its message alone and exits 2, without a stack trace.
 */
export class SetupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SetupError';
  }
}

export const badRequest = (message: string, code?: string) => new AppError(400, message, { code });
export const unauthorized = (message = 'unauthorized') => new AppError(401, message);
export const forbidden = (message = 'forbidden') => new AppError(403, message);
export const notFound = (message = 'not found') => new AppError(404, message);
export const conflict = (message: string) => new AppError(409, message);
export const unavailable = (message: string) => new AppError(503, message);

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}

/**
 * For `.catch()` of a lookup whose 404 means "absent": resolves `undefined` for a 404 and rethrows anything else, so a
 * database failure stays a failure instead of reading as a missing row.
 */
export function undefinedIfNotFound(err: unknown): undefined {
  if (isAppError(err) && err.status === 404) return undefined;
  throw err;
}

/** A short, stack-free description of any thrown value, for logs and terminal error events. */
export function describeError(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  if (typeof err === 'string') return err;
  try {
    return JSON.stringify(err);
  } catch {
    return String(err);
  }
}
