/**
 * The doctor's network probes: one GET each, 3000 ms timeout, never throwing. All four run at once.
 */
export const PROBE_TIMEOUT_MS = 3000;

export type Probe = { ok: true; status: number; headers: Headers; ms: number; startedAt: number; body: unknown } | { ok: false; error: string; ms: number };

export async function probe(url: string, opts: { key?: string; userAgent: string; timeoutMs?: number }): Promise<Probe> {
  const startedAt = Date.now();
  const t0 = performance.now();
  const timeoutMs = opts.timeoutMs ?? PROBE_TIMEOUT_MS;
  try {
    const headers: Record<string, string> = { 'user-agent': opts.userAgent };
    if (opts.key) headers.authorization = `Bearer ${opts.key}`;
    const res = await fetch(url, { headers, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON
    }
    return { ok: true, status: res.status, headers: res.headers, ms: Math.round(performance.now() - t0), startedAt, body };
  } catch (err) {
    const ms = Math.round(performance.now() - t0);
    if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) return { ok: false, error: `timed out after ${timeoutMs} ms`, ms };
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return { ok: false, error: cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err)), ms };
  }
}
