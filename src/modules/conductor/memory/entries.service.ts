import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { MemoryConfig } from '../../../config/config.ts';
import { withTenant, type DB, type Tx } from '../../../db/index.ts';
import type { MemoryOperation } from '../../../db/types.ts';
import type { MemoryEntry, MemoryEntrySummary } from '../../../contracts/memory.ts';
import { AppError, badRequest, conflict, notFound } from '../../../shared/errors.ts';
import { prefixedId } from '../../../shared/ids.ts';
import type { Principal } from '../identity/index.ts';
import { assertWritable, targetOf, type Target } from './access.ts';
import {
  deleteEntry,
  getEntry,
  getEntryById,
  getVersion,
  insertEntry,
  insertVersion,
  listEntries,
  listVersions,
  locateEntry,
  lockPartition,
  updateEntry,
  type EntryRow,
  type VersionRow,
} from './entries.repo.ts';
import { partitionUsage } from './stores.repo.ts';

/**
 * Entries of one partition of a store: read, list, write, delete, rename, and their versions with restore. Every
 * change appends a version (what the entry holds after it); a write may name the version it was based on
 * (`expectedVersion`: 0 for "only if absent"), and a change based on an older one is refused with 409, so two sessions
 * editing one entry never lose an update: the second reads again and retries. Size caps hold per partition, checked
 * under a lock of the partition so concurrent writers cannot pass them together.
 */
export interface MemoryDeps {
  db: Kysely<DB>;
  config: MemoryConfig;
}

export type Caller = { principal: Principal; userId?: string };

export const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

const strip = ({ partition: _p, ...e }: EntryRow): MemoryEntry => e;

export const noEntry = (store: string, path: string) => new AppError(404, `no memory entry at ${path} in store ${store}`, { extra: { code: 'no_entry' } });

function conflictAt(t: Target, path: string, expected: number, current: EntryRow | undefined): AppError {
  if (expected === 0 && current) {
    return new AppError(409, `memory entry ${path} already exists in store ${t.store.name} (version ${current.version})`, { extra: { code: 'memory_exists', currentVersion: current.version } });
  }
  const now = current ? `it is at version ${current.version}` : 'it no longer exists';
  return new AppError(409, `memory entry ${path} in store ${t.store.name} changed since version ${expected} was read: ${now}. Read it again and retry`, {
    extra: { code: 'memory_conflict', currentVersion: current?.version ?? null },
  });
}

/** Runs `fn` on the caller's partition of store `name`, in one tenant transaction. */
export function inPartition<T>(deps: MemoryDeps, caller: Caller, name: string, fn: (tx: Tx, t: Target) => Promise<T>): Promise<T> {
  return withTenant(deps.db, caller.principal.tenantId, async (tx) => fn(tx, await targetOf(tx, deps.config, caller.principal, name, caller.userId)));
}

export function readEntry(deps: MemoryDeps, caller: Caller, name: string, path: string): Promise<MemoryEntry> {
  return inPartition(deps, caller, name, async (tx, t) => {
    const e = await getEntry(tx, { storeId: t.store.id, partition: t.partition }, path);
    if (!e) throw noEntry(name, path);
    return strip(e);
  });
}

/** `prefix`: a folder (`/customers/`) or `/`; a prefix without its trailing slash is read as that folder. */
export function listEntriesOf(deps: MemoryDeps, caller: Caller, name: string, prefix: string, page: { limit?: number; offset: number }): Promise<{ items: MemoryEntrySummary[]; total: number }> {
  const folder = prefix === '' || prefix === '/' ? '/' : prefix.endsWith('/') ? prefix : `${prefix}/`;
  if (!folder.startsWith('/')) throw badRequest('prefix: must start with /');
  return inPartition(deps, caller, name, (tx, t) => listEntries(tx, { storeId: t.store.id, partition: t.partition }, folder, page));
}

/** The size caps: a clear refusal naming the cap, what it allows and what the write would make. */
function checkCaps(t: Target, usage: { entries: number; bytes: number }, before: EntryRow | undefined, bytes: number, path: string): void {
  const { maxEntries, maxEntryBytes, maxTotalBytes } = t.limits;
  const limit = (message: string) => new AppError(413, message, { extra: { code: 'memory_limit', limits: t.limits } });
  if (bytes > maxEntryBytes) throw limit(`memory entry ${path} would be ${bytes} bytes; store ${t.store.name} allows at most ${maxEntryBytes} bytes per entry. Keep entries short, or split this one`);
  if (!before && usage.entries + 1 > maxEntries) {
    throw limit(`store ${t.store.name} is full: it holds ${usage.entries} of at most ${maxEntries} entries. Delete or merge entries before adding ${path}`);
  }
  const total = usage.bytes - (before?.bytes ?? 0) + bytes;
  if (total > maxTotalBytes) {
    throw limit(`store ${t.store.name} would hold ${total} bytes, over its limit of ${maxTotalBytes} (it holds ${usage.bytes} now). Shorten or delete entries before writing ${path}`);
  }
}

/** One change of an entry and the version it appends; `before` is the entry as it was (locked), if any. */
async function record(tx: Tx, t: Target, op: MemoryOperation, before: EntryRow | undefined, after: { path: string; content: string } | null, restoredFrom?: string): Promise<EntryRow | undefined> {
  const w = { storeId: t.store.id, partition: t.partition };
  const versionId = prefixedId('memver');
  const version = (before?.version ?? 0) + 1;
  const entryId = before?.id ?? prefixedId('mem');
  let row: EntryRow | undefined;
  if (after === null) await deleteEntry(tx, entryId);
  else {
    const bytes = Buffer.byteLength(after.content, 'utf8');
    const values = { path: after.path, content: after.content, bytes, sha256: sha256(after.content), version, versionId };
    row = before ? await updateEntry(tx, entryId, values) : await insertEntry(tx, { id: entryId, tenantId: t.tenantId, ...w, ...values });
  }
  const path = after?.path ?? before!.path;
  await insertVersion(tx, {
    id: versionId,
    tenantId: t.tenantId,
    storeId: t.store.id,
    entryId,
    partition: t.partition,
    path,
    version,
    operation: op,
    content: after?.content ?? null,
    bytes: row?.bytes ?? null,
    sha256: row?.sha256 ?? null,
    actor: t.actor,
    restoredFrom,
  });
  return row;
}

/** Writes `content` at `path` within `t` (the caller checked access): create or replace, versioned and capped. */
export async function writeIn(tx: Tx, t: Target, path: string, content: string, expectedVersion?: number): Promise<{ entry: MemoryEntry; created: boolean }> {
  const w = { storeId: t.store.id, partition: t.partition };
  await lockPartition(tx, w);
  const before = await getEntry(tx, w, path, { forUpdate: true });
  if (expectedVersion !== undefined && (expectedVersion === 0 ? before !== undefined : before?.version !== expectedVersion)) throw conflictAt(t, path, expectedVersion, before);
  // nothing changes: no version (a retried write lands once)
  if (before && before.content === content) return { entry: strip(before), created: false };
  checkCaps(t, await partitionUsage(tx, w.storeId, w.partition), before, Buffer.byteLength(content, 'utf8'), path);
  const row = await record(tx, t, before ? 'modified' : 'created', before, { path, content });
  return { entry: strip(row!), created: !before };
}

export function writeEntry(deps: MemoryDeps, caller: Caller, name: string, path: string, body: { content: string; expectedVersion?: number }) {
  return inPartition(deps, caller, name, async (tx, t) => {
    assertWritable(t);
    return writeIn(tx, t, path, body.content, body.expectedVersion);
  });
}

export function deleteEntryAt(deps: MemoryDeps, caller: Caller, name: string, path: string, expectedVersion?: number): Promise<void> {
  return inPartition(deps, caller, name, async (tx, t) => {
    assertWritable(t);
    const before = await getEntry(tx, { storeId: t.store.id, partition: t.partition }, path, { forUpdate: true });
    if (expectedVersion !== undefined && before?.version !== expectedVersion) throw before ? conflictAt(t, path, expectedVersion, before) : noEntry(name, path);
    if (!before) throw noEntry(name, path);
    await record(tx, t, 'deleted', before, null);
  });
}

export function renameEntry(deps: MemoryDeps, caller: Caller, name: string, body: { from: string; to: string; expectedVersion?: number }): Promise<MemoryEntry> {
  return inPartition(deps, caller, name, async (tx, t) => {
    assertWritable(t);
    const w = { storeId: t.store.id, partition: t.partition };
    await lockPartition(tx, w);
    const before = await getEntry(tx, w, body.from, { forUpdate: true });
    if (!before) throw noEntry(name, body.from);
    if (body.expectedVersion !== undefined && before.version !== body.expectedVersion) throw conflictAt(t, body.from, body.expectedVersion, before);
    if (body.from === body.to) return strip(before);
    const taken = await getEntry(tx, w, body.to);
    if (taken) throw conflict(`memory entry ${body.to} already exists in store ${name}; delete it first or choose another path`);
    return strip((await record(tx, t, 'renamed', before, { path: body.to, content: before.content }))!);
  });
}

export interface VersionView {
  id: string;
  entryId: string;
  path: string;
  version: number;
  operation: MemoryOperation;
  bytes: number | null;
  sha256: string | null;
  actor: string;
  restoredFrom: string | null;
  createdAt: string;
  content?: string | null;
}

const versionView = ({ partition: _p, ...v }: VersionRow, withContent: boolean): VersionView => {
  const { content, ...rest } = v;
  return withContent ? { ...rest, content } : rest;
};

export function listVersionsOf(deps: MemoryDeps, caller: Caller, name: string, filter: { path?: string; entryId?: string }, page: { limit: number; offset: number }) {
  return inPartition(deps, caller, name, async (tx, t) => {
    const res = await listVersions(tx, { storeId: t.store.id, partition: t.partition }, filter, page);
    return { items: res.items.map((v) => versionView(v, false)), total: res.total };
  });
}

async function versionIn(tx: Tx, t: Target, id: string): Promise<VersionRow> {
  const v = await getVersion(tx, t.store.id, id);
  // another end user's version reads as absent
  if (!v || v.partition !== t.partition) throw notFound(`unknown memory version: ${id}`);
  return v;
}

export function getVersionOf(deps: MemoryDeps, caller: Caller, name: string, id: string): Promise<VersionView> {
  return inPartition(deps, caller, name, async (tx, t) => versionView(await versionIn(tx, t, id), true));
}

/**
 * Restores the entry a version belongs to as that version held it: a new version with that content (the entry keeps
 * its current path), or, for an entry deleted since, the entry again at the version's path. A version of a delete
 * holds nothing to restore (400); caps and `expectedVersion` apply as to any write.
 */
export function restoreVersion(deps: MemoryDeps, caller: Caller, name: string, id: string, expectedVersion?: number): Promise<MemoryEntry> {
  return inPartition(deps, caller, name, async (tx, t) => {
    assertWritable(t);
    const v = await versionIn(tx, t, id);
    if (v.content === null) throw badRequest(`memory version ${id} records a delete; restore a version before it`);
    const w = { storeId: t.store.id, partition: t.partition };
    await lockPartition(tx, w);
    const current = await getEntryById(tx, t.store.id, v.entryId, { forUpdate: true });
    if (expectedVersion !== undefined && (current?.version ?? 0) !== expectedVersion) throw conflictAt(t, current?.path ?? v.path, expectedVersion, current);
    if (!current) {
      const taken = await getEntry(tx, w, v.path);
      if (taken) throw conflict(`memory entry ${v.path} exists again in store ${name} (a new entry); delete or rename it before restoring this version`);
      checkCaps(t, await partitionUsage(tx, w.storeId, w.partition), undefined, v.bytes ?? 0, v.path);
      // the entry comes back under its own id, after its last version (the delete)
      const last = (await listVersions(tx, w, { entryId: v.entryId }, { limit: 1, offset: 0 })).items[0];
      const before = { id: v.entryId, version: last?.version ?? v.version } as EntryRow;
      const row = await insertEntry(tx, { id: v.entryId, tenantId: t.tenantId, ...w, path: v.path, content: v.content, bytes: v.bytes ?? 0, sha256: v.sha256 ?? sha256(v.content), version: before.version + 1, versionId: prefixedId('memver') });
      await insertVersion(tx, { id: row.versionId, tenantId: t.tenantId, storeId: w.storeId, entryId: row.id, partition: w.partition, path: row.path, version: row.version, operation: 'restored', content: row.content, bytes: row.bytes, sha256: row.sha256, actor: t.actor, restoredFrom: v.id });
      return strip(row);
    }
    if (current.content === v.content) return strip(current);
    checkCaps(t, await partitionUsage(tx, w.storeId, w.partition), current, v.bytes ?? 0, current.path);
    return strip((await record(tx, t, 'restored', current, { path: current.path, content: v.content }, v.id))!);
  });
}

/**
 * For surfaces that address entries and versions by id (the /v1 face): the partition an entry or a version is in and
 * the entry's path, so the by-path services above can be called as the person who names them. Undefined when absent.
 */
export function locate(deps: MemoryDeps, tenantId: string, storeId: string, ref: { entryId: string } | { versionId: string }): Promise<{ partition: string; path: string; entryId: string } | undefined> {
  return withTenant(deps.db, tenantId, async (tx) => {
    if ('versionId' in ref) {
      const v = await getVersion(tx, storeId, ref.versionId);
      return v && { partition: v.partition, path: v.path, entryId: v.entryId };
    }
    const found = await locateEntry(tx, storeId, ref.entryId);
    return found && { ...found, entryId: ref.entryId };
  });
}
