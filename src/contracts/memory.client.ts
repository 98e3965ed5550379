import { CallError, send, trimBase, type FetchLike } from './http-client.ts';
import type { MemoryEntry, MemoryEntrySummary, MemoryMountView, MemorySearchHit } from './memory.ts';

/**
 * The runner's client for the memory tools: `/api/memory-mounts` and `/api/memory-stores/{store}/…` on the conductor,
 * called with the run's token, from which the conductor knows the tenant, the stores the run mounts and the end user
 * whose partition it reaches (the runner never names one). A refusal throws a CallError whose message is the
 * conductor's own words (no prefix): the tools hand it to the model as it is.
 */
export interface MemoryClient {
  mounts(runToken: string, signal?: AbortSignal): Promise<MemoryMountView[]>;
  list(runToken: string, store: string, prefix: string, signal?: AbortSignal): Promise<MemoryEntrySummary[]>;
  /** Undefined when there is no entry at `path`. */
  read(runToken: string, store: string, path: string, signal?: AbortSignal): Promise<MemoryEntry | undefined>;
  /** `expectedVersion` 0: only if no entry is there; n: only if the entry is at version n (else 409). */
  write(runToken: string, store: string, path: string, body: { content: string; expectedVersion?: number }, signal?: AbortSignal): Promise<MemoryEntry>;
  remove(runToken: string, store: string, path: string, expectedVersion: number | undefined, signal?: AbortSignal): Promise<void>;
  rename(runToken: string, store: string, body: { from: string; to: string; expectedVersion?: number }, signal?: AbortSignal): Promise<MemoryEntry>;
  search(runToken: string, query: { q: string; store?: string; limit?: number }, signal?: AbortSignal): Promise<MemorySearchHit[]>;
}

/** `/customers/acme.md` → `customers/acme.md` with each segment escaped, for `…/entries/<path>`. */
export function entryUrlPath(path: string): string {
  return path.split('/').filter((s) => s !== '').map(encodeURIComponent).join('/');
}

export function createMemoryClient(opts: { baseUrl: string; fetch?: FetchLike }): MemoryClient {
  const base = trimBase(opts.baseUrl);
  const fetchFn: FetchLike = opts.fetch ?? ((req) => fetch(req));

  async function call(token: string, method: string, path: string, json: unknown, signal: AbortSignal | undefined, allow404 = false): Promise<Response | undefined> {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' };
    if (json !== undefined) headers['content-type'] = 'application/json';
    const req = new Request(base + path, { method, headers, body: json === undefined ? undefined : JSON.stringify(json), signal });
    const res = await send(fetchFn, req, `conductor ${method} ${path}`);
    if (res.ok) return res;
    if (allow404 && res.status === 404) {
      const body = (await res.json().catch(() => ({}))) as { code?: string };
      if (body.code === 'no_entry') return undefined;
      throw new CallError(404, (body as { error?: string }).error ?? 'not found');
    }
    const text = await res.text();
    let message = `${res.status} ${res.statusText}`.trim();
    try {
      const parsed = JSON.parse(text) as { error?: unknown };
      if (typeof parsed.error === 'string') message = parsed.error;
    } catch {
      if (text) message = text.slice(0, 500);
    }
    throw new CallError(res.status, message);
  }
  const store = (name: string) => `/api/memory-stores/${encodeURIComponent(name)}`;

  return {
    async mounts(token, signal) {
      return (await (await call(token, 'GET', '/api/memory-mounts', undefined, signal))!.json()) as MemoryMountView[];
    },
    async list(token, name, prefix, signal) {
      // the route pages 200 by default: ask for its largest page, a store's default cap of entries
      const query = `?limit=1000${prefix && prefix !== '/' ? `&prefix=${encodeURIComponent(prefix)}` : ''}`;
      return (await (await call(token, 'GET', `${store(name)}/entries${query}`, undefined, signal))!.json()) as MemoryEntrySummary[];
    },
    async read(token, name, path, signal) {
      const res = await call(token, 'GET', `${store(name)}/entries/${entryUrlPath(path)}`, undefined, signal, true);
      return res ? ((await res.json()) as MemoryEntry) : undefined;
    },
    async write(token, name, path, body, signal) {
      return (await (await call(token, 'PUT', `${store(name)}/entries/${entryUrlPath(path)}`, body, signal))!.json()) as MemoryEntry;
    },
    async remove(token, name, path, expectedVersion, signal) {
      const query = expectedVersion === undefined ? '' : `?expectedVersion=${expectedVersion}`;
      await (await call(token, 'DELETE', `${store(name)}/entries/${entryUrlPath(path)}${query}`, undefined, signal))!.body?.cancel();
    },
    async rename(token, name, body, signal) {
      return (await (await call(token, 'POST', `${store(name)}/rename`, body, signal))!.json()) as MemoryEntry;
    },
    async search(token, query, signal) {
      const params = new URLSearchParams({ q: query.q });
      if (query.store) params.set('store', query.store);
      if (query.limit) params.set('limit', String(query.limit));
      return (await (await call(token, 'GET', `/api/memory-mounts/search?${params}`, undefined, signal))!.json()) as MemorySearchHit[];
    },
  };
}
