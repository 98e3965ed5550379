/**
 * Plumbing shared by the typed clients in this folder (worker client, runner client): the fetch they are given and
 * the error they throw for a non-2xx answer or a broken transport.
 */

/**
 * The only way a client reaches its server. Always called with a single `Request`, so the all-in-one build can pass
 * `(req) => app.fetch(req)` (in-process, no sockets) and split roles pass the global `fetch`.
 */
export type FetchLike = (req: Request) => Promise<Response> | Response;

/** A call to another role that failed: `status` is the HTTP status, or undefined when the transport itself failed. */
export class CallError extends Error {
  readonly status: number | undefined;
  constructor(status: number | undefined, message: string, opts: { cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'CallError';
    this.status = status;
  }
}

/** Reads `{"error": "…"}` from a failed response (falling back to the status text) and throws it as a CallError. */
export async function throwForStatus(res: Response, what: string): Promise<never> {
  let message = `${res.status} ${res.statusText}`.trim();
  try {
    const text = await res.text();
    const parsed = text ? (JSON.parse(text) as { error?: unknown }) : undefined;
    if (parsed && typeof parsed.error === 'string') message = parsed.error;
    else if (text) message = text.slice(0, 500);
  } catch {
    // a body that is not JSON keeps the status line as the message
  }
  throw new CallError(res.status, `${what}: ${message}`);
}

/** Runs one request through `fetch`, turning transport failures (refused, reset, aborted) into a CallError. */
export async function send(fetchFn: FetchLike, req: Request, what: string): Promise<Response> {
  try {
    return await fetchFn(req);
  } catch (err) {
    if (req.signal.aborted) throw err;
    throw new CallError(undefined, `${what}: ${transportMessage(err)}`, { cause: err });
  }
}

/** undici hides the useful part (ECONNREFUSED, ECONNRESET) in `cause`; surface it. */
export function transportMessage(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause as { code?: string; message?: string } | undefined;
  if (cause?.code) return `${err.message} (${cause.code})`;
  if (cause?.message) return `${err.message} (${cause.message})`;
  return err.message || err.name;
}

/** Reads a body up to `maxBytes`; undefined when it is larger (the rest is cancelled, not downloaded). */
export async function readCapped(res: Response, maxBytes: number): Promise<Uint8Array | undefined> {
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await res.body?.cancel().catch(() => {});
    return undefined;
  }
  if (!res.body) return new Uint8Array();
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      return undefined;
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}

export function trimBase(url: string): string {
  return url.replace(/\/+$/, '');
}
