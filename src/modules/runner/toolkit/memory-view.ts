import { CallError } from '../../../contracts/http-client.ts';
import type { MemoryClient } from '../../../contracts/memory.client.ts';
import type { MemoryEntrySummary, MemoryMountView } from '../../../contracts/memory.ts';
import type { ToolContext } from './tool.ts';
import { ToolFailure } from './tool-failure.ts';

/**
 * What the memory tools share: the `/memories` directory (one folder per mounted store), the conductor call with the
 * run's token, the versions a session has seen (its edits are based on them), and the texts the model reads, worded
 * as Anthropic's memory tool words them so a model trained on that tool reads them as it expects.
 */
export const ROOT = '/memories';

export interface Where {
  /** Undefined for `/memories` itself. */
  store?: string;
  /** `/` for a store's top folder, else the entry or folder path inside the store (no trailing slash). */
  path: string;
}

export function parsePath(raw: string | undefined, field = 'path'): Where {
  if (raw === undefined || raw === '') throw new ToolFailure(`${field} is required: a path under ${ROOT}, such as ${ROOT}/<store>/notes.md`);
  const p = raw.replace(/\/+$/, '');
  if (p !== ROOT && !p.startsWith(`${ROOT}/`)) throw new ToolFailure(`The path ${raw} is outside your memory: every memory path starts with ${ROOT}/ (view ${ROOT} to see your stores)`);
  const rest = p.slice(ROOT.length + 1);
  if (!rest) return { path: '/' };
  const slash = rest.indexOf('/');
  return slash < 0 ? { store: rest, path: '/' } : { store: rest.slice(0, slash), path: rest.slice(slash) };
}

export const display = (store: string, path: string) => (path === '/' ? `${ROOT}/${store}` : `${ROOT}/${store}${path}`);

export interface Memory {
  client: MemoryClient;
  token: string;
  signal: AbortSignal;
  /** The version of each entry this session last read or wrote, by `store\0path`. */
  seen: Map<string, number>;
}

const SEEN = new WeakMap<object, Map<string, number>>();

export function memoryOf(ctx: ToolContext, tool: string): Memory {
  const token = ctx.session.runToken;
  if (!token) throw new ToolFailure(`${tool} needs a run started by the conductor (this session has no run token)`);
  if (!ctx.memory) throw new ToolFailure(`${tool} is unavailable: this runner has no conductor configured (SVC_CONDUCTOR_URL)`);
  let seen = SEEN.get(ctx.session);
  if (!seen) SEEN.set(ctx.session, (seen = new Map()));
  return { client: ctx.memory, token, signal: ctx.signal, seen };
}

export const seenKey = (store: string, path: string) => `${store}\u0000${path}`;

/** A conductor refusal (a read-only mount, a size cap, a conflict, a store gone) in its own words, for the model. */
export async function call<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof CallError && err.status !== undefined && err.status < 500) throw new ToolFailure(err.message, { status: err.status });
    throw err;
  }
}

export function requireFile(w: Where, raw: string): asserts w is { store: string; path: string } {
  if (!w.store) throw new ToolFailure(`${raw} is the memory root, not a file: files live in ${ROOT}/<store>/ (view ${ROOT} to see your stores)`);
  if (w.path === '/') throw new ToolFailure(`${raw} is the top folder of store ${w.store}, not a file`);
}

export const missing = (raw: string) => new ToolFailure(`The path ${raw} does not exist. Please provide a valid path.`);

const size = (n: number) => (n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 / 1024).toFixed(1)} MiB`);

export function rootText(mounts: MemoryMountView[]): string {
  if (mounts.length === 0) return `${ROOT} is empty: no memory store is mounted for you.`;
  const lines = mounts.map((m) => {
    const what = m.description ? ` ${m.description}` : '';
    if (!m.available) return `${ROOT}/${m.name}/ (unavailable: ${m.reason})`;
    const scope = m.scope === 'per_user' ? 'per user: the memory of the person you are talking to' : 'shared by every session that mounts it';
    const access = m.access === 'read' ? 'read-only' : 'read and write';
    return `${ROOT}/${m.name}/ (${scope}; ${access}; ${m.usage?.entries ?? 0} of at most ${m.limits.maxEntries} files, ${size(m.usage?.bytes ?? 0)} of ${size(m.limits.maxTotalBytes)}, at most ${size(m.limits.maxEntryBytes)} per file)${what}`;
  });
  return `Here are your memory stores: one directory each under ${ROOT}, kept across sessions:\n${lines.join('\n')}`;
}

export function listingText(store: string, folder: string, entries: MemoryEntrySummary[]): string {
  const lines = entries.map((e) => `${String(e.bytes).padStart(8)}\t${display(store, e.path)}`);
  return `Here're the files and directories in ${display(store, folder)} (size in bytes, path):\n${lines.join('\n') || '(no files yet)'}`;
}

/** `cat -n`, as the memory tool numbers lines: six columns, a tab, the line. */
export function numbered(content: string, from = 1, to?: number): string {
  const lines = content.split('\n');
  const last = to === undefined || to === -1 ? lines.length : Math.min(to, lines.length);
  const out: string[] = [];
  for (let i = Math.max(from, 1); i <= last; i++) out.push(`${String(i).padStart(6)}\t${lines[i - 1]}`);
  return out.join('\n');
}
