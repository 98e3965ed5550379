import { readFileSync } from 'node:fs';
import { defineCommand } from 'citty';
import { globalArgs, limitArg } from './args.ts';
import { usageError } from './client/exit.ts';
import { printList, readLimit } from './client/list.ts';
import type { Output } from './client/output.ts';
import { openSession } from './client/session.ts';

/**
 * `svc memory stores|create|drop|ls|cat|write|rm|mv|search|history|restore|users`: memory stores and their entries
 * (/api/memory-stores) from the command line. A per_user store takes `--user <end-user id>`.
 */
interface StoreRecord {
  name: string;
  description: string;
  scope: string;
  limits: { maxEntries: number; maxEntryBytes: number; maxTotalBytes: number };
  usage: { entries: number; bytes: number };
  automationId: string | null;
}
interface EntryRecord {
  path: string;
  bytes: number;
  version: number;
  updatedAt: string;
  content?: string;
}
interface VersionRecord {
  id: string;
  path: string;
  version: number;
  operation: string;
  bytes: number | null;
  actor: string;
  createdAt: string;
}

const enc = encodeURIComponent;
const storeArg = { store: { type: 'positional', description: 'memory store name', required: true } } as const;
const pathArg = { path: { type: 'positional', description: 'entry path, e.g. /customers/acme.md', required: true } } as const;
const userArg = { user: { type: 'string', description: 'the end user (per_user stores)', valueHint: 'id' } } as const;

const base = (store: string) => `/api/memory-stores/${enc(store)}`;
const entryUrl = (store: string, path: string) => `${base(store)}/entries/${path.replace(/^\/+/, '').split('/').map(enc).join('/')}`;
const userQuery = (user: string | undefined, sep = '?') => (user ? `${sep}userId=${enc(user)}` : '');
const limitsOf = (a: { 'max-entries'?: string; 'max-entry-bytes'?: string; 'max-total-bytes'?: string }) => {
  const out: Record<string, number> = {};
  for (const [flag, key] of [['max-entries', 'maxEntries'], ['max-entry-bytes', 'maxEntryBytes'], ['max-total-bytes', 'maxTotalBytes']] as const) {
    const raw = a[flag];
    if (raw === undefined) continue;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1) throw usageError(`--${flag}: expected a whole number of at least 1, got "${raw}"`);
    out[key] = n;
  }
  return Object.keys(out).length ? out : undefined;
};

function printEntry(out: Output, e: EntryRecord): void {
  if (out.json) return out.data(e);
  out.fields([['path', e.path], ['version', e.version], ['bytes', e.bytes], ['updatedAt', e.updatedAt]]);
}

export default defineCommand({
  meta: { name: 'memory', description: 'Memory stores: what agents remember across sessions' },
  subCommands: {
    stores: defineCommand({
      meta: { name: 'stores', description: 'List memory stores' },
      args: { ...globalArgs },
      async run({ args }) {
        const { out, api } = openSession(args, { needKey: true });
        const items = await api.get<StoreRecord[]>('/api/memory-stores');
        printList(out, items, (s) => [s.name, s.scope, s.usage.entries, s.usage.bytes, s.description], ['name', 'scope', 'entries', 'bytes', 'description']);
      },
    }),
    create: defineCommand({
      meta: { name: 'create', description: 'Create a memory store' },
      args: {
        ...globalArgs,
        name: { type: 'positional', description: 'its name (what profiles mount)', required: true },
        description: { type: 'string', description: 'what it holds (the agent reads this)' },
        'per-user': { type: 'boolean', description: 'one memory per end user (scope per_user)' },
        'max-entries': { type: 'string', description: 'cap on entries (per end user)' },
        'max-entry-bytes': { type: 'string', description: 'cap on one entry' },
        'max-total-bytes': { type: 'string', description: 'cap on all entries (per end user)' },
      },
      async run({ args }) {
        const { out, api } = openSession(args, { needKey: true });
        const body = { name: args.name, ...(args.description ? { description: args.description } : {}), scope: args['per-user'] ? 'per_user' : 'shared', ...(limitsOf(args) ? { limits: limitsOf(args) } : {}) };
        const s = (await api.request<StoreRecord>('POST', '/api/memory-stores', { body })).data;
        if (out.json) return out.data(s);
        out.fields([['name', s.name], ['scope', s.scope], ['maxEntries', s.limits.maxEntries], ['maxEntryBytes', s.limits.maxEntryBytes], ['maxTotalBytes', s.limits.maxTotalBytes]]);
      },
    }),
    drop: defineCommand({
      meta: { name: 'drop', description: 'Delete a memory store with all its entries and versions' },
      args: { ...globalArgs, ...storeArg },
      async run({ args }) {
        const { out, api } = openSession(args, { needKey: true });
        await api.request('DELETE', base(args.store));
        if (out.json) return out.data({ deleted: args.store });
        out.log.success(`memory store ${args.store} deleted`);
      },
    }),
    ls: defineCommand({
      meta: { name: 'ls', description: "List a store's entries" },
      args: { ...globalArgs, ...storeArg, ...userArg, ...limitArg, prefix: { type: 'string', description: 'only below this folder, e.g. /customers/' } },
      async run({ args }) {
        const { out, api } = openSession(args, { needKey: true });
        const q = [`limit=${readLimit(args.limit, 200)}`, ...(args.prefix ? [`prefix=${enc(args.prefix)}`] : [])].join('&');
        const items = await api.get<EntryRecord[]>(`${base(args.store)}/entries?${q}${userQuery(args.user, '&')}`);
        printList(out, items, (e) => [e.path, e.bytes, e.version, e.updatedAt], ['path', 'bytes', 'version', 'updated']);
      },
    }),
    cat: defineCommand({
      meta: { name: 'cat', description: 'Print an entry' },
      args: { ...globalArgs, ...storeArg, ...pathArg, ...userArg },
      async run({ args }) {
        const { out, api } = openSession(args, { needKey: true });
        const e = await api.get<EntryRecord>(entryUrl(args.store, args.path) + userQuery(args.user));
        if (out.json) return out.data(e);
        out.write(e.content ?? '');
        if (e.content && !e.content.endsWith('\n')) out.write('\n');
      },
    }),
    write: defineCommand({
      meta: { name: 'write', description: 'Write an entry (a new version); its text from --content, --file or stdin' },
      args: {
        ...globalArgs,
        ...storeArg,
        ...pathArg,
        ...userArg,
        content: { type: 'string', description: 'the text' },
        file: { type: 'string', description: 'read the text from this file' },
        'expect-version': { type: 'string', description: 'only if the entry is at this version (0: only if it does not exist)' },
      },
      async run({ args }) {
        const { out, api } = openSession(args, { needKey: true });
        const content = args.content ?? (args.file ? readFileSync(args.file, 'utf8') : process.stdin.isTTY ? undefined : readFileSync(0, 'utf8'));
        if (content === undefined) throw usageError('give the text with --content, --file or on stdin');
        const expected = args['expect-version'] === undefined ? undefined : Number(args['expect-version']);
        if (expected !== undefined && (!Number.isInteger(expected) || expected < 0)) throw usageError(`--expect-version: expected a whole number, got "${args['expect-version']}"`);
        const body = { content, ...(expected !== undefined ? { expectedVersion: expected } : {}), ...(args.user ? { userId: args.user } : {}) };
        printEntry(out, (await api.request<EntryRecord>('PUT', entryUrl(args.store, args.path), { body })).data);
      },
    }),
    rm: defineCommand({
      meta: { name: 'rm', description: 'Delete an entry (restorable from its versions for a while)' },
      args: { ...globalArgs, ...storeArg, ...pathArg, ...userArg },
      async run({ args }) {
        const { out, api } = openSession(args, { needKey: true });
        await api.request('DELETE', entryUrl(args.store, args.path) + userQuery(args.user));
        if (out.json) return out.data({ deleted: args.path });
        out.log.success(`${args.path} deleted`);
      },
    }),
    mv: defineCommand({
      meta: { name: 'mv', description: 'Rename an entry' },
      args: { ...globalArgs, ...storeArg, from: { type: 'positional', required: true, description: 'its path' }, to: { type: 'positional', required: true, description: 'the new path' }, ...userArg },
      async run({ args }) {
        const { out, api } = openSession(args, { needKey: true });
        printEntry(out, (await api.request<EntryRecord>('POST', `${base(args.store)}/rename`, { body: { from: args.from, to: args.to, ...(args.user ? { userId: args.user } : {}) } })).data);
      },
    }),
    search: defineCommand({
      meta: { name: 'search', description: 'Full-text search of a store, best first' },
      args: { ...globalArgs, ...storeArg, query: { type: 'positional', required: true, description: 'words, "a phrase", or, -word' }, ...userArg, ...limitArg },
      async run({ args }) {
        const { out, api } = openSession(args, { needKey: true });
        const hits = await api.get<Array<{ path: string; rank: number; snippet: string }>>(`${base(args.store)}/search?q=${enc(args.query)}&limit=${Math.min(readLimit(args.limit, 10), 50)}${userQuery(args.user, '&')}`);
        printList(out, hits, (h) => [h.path, h.rank.toFixed(3), h.snippet.replace(/\s+/g, ' ')], ['path', 'rank', 'snippet']);
      },
    }),
    history: defineCommand({
      meta: { name: 'history', description: 'Versions, newest first: of one entry, or of the whole store' },
      args: { ...globalArgs, ...storeArg, path: { type: 'positional', required: false, description: 'only this entry' }, ...userArg, ...limitArg },
      async run({ args }) {
        const { out, api } = openSession(args, { needKey: true });
        const q = [`limit=${Math.min(readLimit(args.limit, 50), 200)}`, ...(args.path ? [`path=${enc(args.path)}`] : [])].join('&');
        const items = await api.get<VersionRecord[]>(`${base(args.store)}/versions?${q}${userQuery(args.user, '&')}`);
        printList(out, items, (v) => [v.id, v.path, v.version, v.operation, v.bytes, v.actor, v.createdAt], ['id', 'path', 'version', 'operation', 'bytes', 'by', 'at']);
      },
    }),
    restore: defineCommand({
      meta: { name: 'restore', description: 'Restore an entry as an earlier version held it' },
      args: { ...globalArgs, ...storeArg, version: { type: 'positional', required: true, description: 'the version id (from history)' }, ...userArg },
      async run({ args }) {
        const { out, api } = openSession(args, { needKey: true });
        printEntry(out, (await api.request<EntryRecord>('POST', `${base(args.store)}/versions/${enc(args.version)}/restore`, { body: args.user ? { userId: args.user } : {} })).data);
      },
    }),
    users: defineCommand({
      meta: { name: 'users', description: "A per_user store's end users" },
      args: { ...globalArgs, ...storeArg, ...limitArg },
      async run({ args }) {
        const { out, api } = openSession(args, { needKey: true });
        const items = await api.get<Array<{ userId: string; entries: number; bytes: number; updatedAt: string }>>(`${base(args.store)}/users?limit=${readLimit(args.limit, 200)}`);
        printList(out, items, (u) => [u.userId, u.entries, u.bytes, u.updatedAt], ['user', 'entries', 'bytes', 'updated']);
      },
    }),
  },
});
