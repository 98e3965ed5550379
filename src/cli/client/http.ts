import { CliError, EXIT, authError, failure, notFoundError } from './exit.ts';

/**
 * The client's HTTP calls to the API: bearer key, JSON in and out, a timeout per request, and one mapping of
 * failures to exit codes (401 → 3, 404 and an unknown profile → 4, everything else → 1: a 403 is a refusal of a
 * key that did authenticate, so a failure, not an authentication failure; 3 is for bad keys, missing URL or key and
 * denied logins).
 */
export class ApiError extends Error {
  readonly status: number;
  readonly body: unknown;
  constructor(status: number, message: string, body: unknown) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.body = body;
  }
}

/** The network failed (refused, DNS, TLS, timeout): no HTTP status. */
export class NetworkError extends Error {
  readonly url: string;
  constructor(url: string, message: string) {
    super(message);
    this.name = 'NetworkError';
    this.url = url;
  }
}

export interface ApiResponse<T> {
  status: number;
  headers: Headers;
  data: T;
}

export interface RequestOptions {
  body?: unknown;
  /** A multipart body instead of JSON (`svc skills import`); fetch sets its content type with the boundary. */
  form?: FormData;
  /** Send no Authorization header (device-login routes). */
  anonymous?: boolean;
  key?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
  accept?: string;
  headers?: Record<string, string>;
}

export interface Api {
  baseUrl: string;
  request<T = unknown>(method: string, path: string, opts?: RequestOptions): Promise<ApiResponse<T>>;
  get<T = unknown>(path: string, opts?: RequestOptions): Promise<T>;
  /** The raw response (streams); throws ApiError on a non-2xx status. */
  raw(method: string, path: string, opts?: RequestOptions): Promise<Response>;
}

export const USER_AGENT = 'svc-cli';

function describeNetwork(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) return 'timed out';
  return cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
}

export function createApi(baseUrl: string, key: string | undefined, version: string): Api {
  const raw = async (method: string, path: string, opts: RequestOptions = {}): Promise<Response> => {
    const url = baseUrl + path;
    const headers: Record<string, string> = { 'user-agent': `${USER_AGENT}/${version}`, accept: opts.accept ?? 'application/json', ...opts.headers };
    const bearer = opts.key ?? key;
    if (bearer && !opts.anonymous) headers.authorization = `Bearer ${bearer}`;
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const signals = [opts.signal, opts.timeoutMs ? AbortSignal.timeout(opts.timeoutMs) : undefined].filter((s): s is AbortSignal => !!s);
    let res: Response;
    try {
      const body = opts.form ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body));
      res = await fetch(url, { method, headers, body, signal: signals.length ? AbortSignal.any(signals) : undefined });
    } catch (err) {
      if (opts.signal?.aborted) throw err;
      throw new NetworkError(url, `cannot reach ${baseUrl}: ${describeNetwork(err)}`);
    }
    if (res.ok) return res;
    const text = await res.text().catch(() => '');
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    const message = (body as { error?: unknown })?.error;
    throw new ApiError(res.status, typeof message === 'string' ? message : typeof (message as { message?: unknown })?.message === 'string' ? (message as { message: string }).message : `HTTP ${res.status}`, body);
  };
  const request = async <T>(method: string, path: string, opts: RequestOptions = {}): Promise<ApiResponse<T>> => {
    const res = await raw(method, path, { timeoutMs: 30_000, ...opts });
    const text = await res.text();
    let data: unknown;
    try {
      data = text ? JSON.parse(text) : undefined;
    } catch (err) {
      // something else answers at that URL (a web server, a proxy's page): say so, not a JSON parser's stack
      throw Object.assign(failure(`${baseUrl}${path} answered ${res.status} with something that is not JSON`, 'check the API URL (`svc context show`): is an svc server there?'), { cause: err });
    }
    return { status: res.status, headers: res.headers, data: data as T };
  };
  return { baseUrl, raw, request, get: async <T>(path: string, opts?: RequestOptions) => (await request<T>('GET', path, opts)).data };
}

/** The one mapping of request failures to exit codes. */
export function toCliError(err: unknown): CliError | undefined {
  if (err instanceof CliError) return err;
  if (err instanceof NetworkError) return failure(err.message, 'check the API URL (`svc context show`) and that the server is running');
  if (err instanceof ApiError) {
    if (err.status === 401) return authError(`authentication failed: ${err.message}`, 'run `svc auth login`');
    if (err.status === 403) return failure(`permission denied: ${err.message}`);
    if (err.status === 404) return notFoundError(`not found: ${err.message}`);
    // The seed has POST /api/runs answer an unknown profile with 400 `unknown_profile: <name>`; to a user it is "not found".
    const unknownProfile = err.status === 400 ? /^unknown_profile: (.+)$/.exec(err.message) : null;
    if (unknownProfile) return new CliError(EXIT.notFound, `unknown profile: ${unknownProfile[1]}`, 'list the profiles with `svc profiles`');
    return new CliError(EXIT.failure, `request failed (${err.status}): ${err.message}`);
  }
  return undefined;
}
