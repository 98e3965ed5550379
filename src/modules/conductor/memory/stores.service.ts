import { assertUnchanged } from '../../../shared/strict-body.ts';
import type { MemoryConfig } from '../../../config/config.ts';
import type { Kysely } from 'kysely';
import { withTenant, type DB } from '../../../db/index.ts';
import { RESERVED_STORE_PREFIX, type MemoryLimits, type MemoryMount, type MemoryMountView, type MemorySearchHit } from '../../../contracts/memory.ts';
import { AppError, badRequest, conflict, notFound } from '../../../shared/errors.ts';
import { prefixedId } from '../../../shared/ids.ts';
import type { Principal } from '../identity/index.ts';
import { limitsOf, noRunEndUser, runIdOf, targetOf } from './access.ts';
import { searchEntries } from './entries.repo.ts';
import type { MemoryDeps } from './entries.service.ts';
import type { CreateStore, Limits, UpdateStore } from './memory.schema.ts';
import { deleteStore, getStore, getStoresByName, insertStore, listPartitions, listStores, partitionUsage, runMemory, storeUsage, updateStore, type StoreRow } from './stores.repo.ts';

/** Memory stores themselves: create (caps under the operator's ceilings), list, read, update, delete; what a run mounts. */
export interface StoreView {
  id: string;
  name: string;
  description: string;
  scope: 'shared' | 'per_user';
  limits: MemoryLimits;
  metadata: Record<string, string>;
  /** Set when the store holds an automation's memory note. */
  automationId: string | null;
  /** What it holds, every partition together. */
  usage: { entries: number; bytes: number };
  createdAt: string;
  updatedAt: string;
}

export function storeView(config: MemoryConfig, s: StoreRow, usage: { entries: number; bytes: number }): StoreView {
  return {
    id: s.id,
    name: s.name,
    description: s.description,
    scope: s.scope,
    limits: limitsOf(config, s),
    metadata: s.metadata,
    automationId: s.automationId,
    usage,
    createdAt: s.createdAt.toISOString(),
    updatedAt: s.updatedAt.toISOString(),
  };
}

const CEILING_VARS: Record<keyof MemoryLimits, string> = { maxEntries: 'SVC_MEMORY_MAX_ENTRIES', maxEntryBytes: 'SVC_MEMORY_MAX_ENTRY_BYTES', maxTotalBytes: 'SVC_MEMORY_MAX_TOTAL_BYTES' };

/** Caps as asked (400 above the operator's ceiling), the rest from `current` or the ceilings. */
export function resolveLimits(config: MemoryConfig, asked: Limits | undefined, current?: MemoryLimits, field = 'limits'): MemoryLimits {
  const out = { ...(current ?? { maxEntries: config.maxEntries, maxEntryBytes: config.maxEntryBytes, maxTotalBytes: config.maxTotalBytes }) };
  for (const key of Object.keys(CEILING_VARS) as Array<keyof MemoryLimits>) {
    const value = asked?.[key];
    if (value === undefined) continue;
    if (value > config[key]) throw badRequest(`${field}.${key}: at most ${config[key]} (the operator's ceiling, ${CEILING_VARS[key]})`);
    out[key] = value;
  }
  return out;
}

export async function createStore(deps: MemoryDeps, tenantId: string, body: CreateStore, opts: { automationId?: string } = {}): Promise<StoreView> {
  if (!opts.automationId && body.name.startsWith(RESERVED_STORE_PREFIX)) throw badRequest(`name: the prefix ${RESERVED_STORE_PREFIX} is kept for automations' memory notes`);
  const limits = resolveLimits(deps.config, body.limits);
  const row = await withTenant(deps.db, tenantId, (tx) =>
    insertStore(tx, { id: prefixedId('mst'), tenantId, name: body.name, description: body.description, scope: body.scope, ...limits, metadata: body.metadata ?? {}, automationId: opts.automationId }),
  );
  if (!row) throw conflict(`memory store ${body.name} already exists`);
  return storeView(deps.config, row, { entries: 0, bytes: 0 });
}

export async function listStoreViews(deps: MemoryDeps, tenantId: string, page: { limit?: number; offset: number }): Promise<{ items: StoreView[]; total: number }> {
  const res = await withTenant(deps.db, tenantId, (tx) => listStores(tx, page));
  return { items: res.items.map((r) => storeView(deps.config, r.store, { entries: r.entries, bytes: r.bytes })), total: res.total };
}

/** By name, or by id (`mst_…`, the /v1 face). */
export async function getStoreView(deps: MemoryDeps, tenantId: string, ref: { name: string } | { id: string }): Promise<StoreView> {
  return withTenant(deps.db, tenantId, async (tx) => {
    const s = await getStore(tx, ref);
    if (!s) throw notFound(`unknown memory store: ${'name' in ref ? ref.name : ref.id}`);
    return storeView(deps.config, s, await storeUsage(tx, s.id));
  });
}

export async function updateStoreBy(deps: MemoryDeps, tenantId: string, ref: { name: string } | { id: string }, body: UpdateStore): Promise<StoreView> {
  await withTenant(deps.db, tenantId, async (tx) => {
    const s = await getStore(tx, ref, { forUpdate: true });
    if (!s) throw notFound(`unknown memory store: ${'name' in ref ? ref.name : ref.id}`);
    assertUnchanged('name', body.name, s.name, 'fixed once created (profiles mount the store by name)');
    assertUnchanged('scope', body.scope, s.scope, 'fixed once created');
    const limits = resolveLimits(deps.config, body.limits, { maxEntries: s.maxEntries, maxEntryBytes: s.maxEntryBytes, maxTotalBytes: s.maxTotalBytes });
    await updateStore(tx, s.id, {
      ...(body.description !== undefined ? { description: body.description } : {}),
      ...(body.metadata !== undefined ? { metadata: body.metadata } : {}),
      max_entries: limits.maxEntries,
      max_entry_bytes: limits.maxEntryBytes,
      max_total_bytes: limits.maxTotalBytes,
    });
  });
  return getStoreView(deps, tenantId, ref);
}

/** Deletes the store with every entry and version of it; profiles that mount it then see it as gone. */
export async function deleteStoreBy(deps: MemoryDeps, tenantId: string, ref: { name: string } | { id: string }): Promise<string> {
  return withTenant(deps.db, tenantId, async (tx) => {
    const s = await getStore(tx, ref);
    if (!s || !(await deleteStore(tx, s.id))) throw notFound(`unknown memory store: ${'name' in ref ? ref.name : ref.id}`);
    return s.id;
  });
}

/** A per_user store's end users, with what each one's memory holds. */
export async function listUsers(deps: MemoryDeps, tenantId: string, name: string, page: { limit: number; offset: number }) {
  return withTenant(deps.db, tenantId, async (tx) => {
    const s = await getStore(tx, { name });
    if (!s) throw notFound(`unknown memory store: ${name}`);
    if (s.scope !== 'per_user') throw badRequest(`memory store ${name} is shared; it has no per-user memories`);
    return listPartitions(tx, s.id, page);
  });
}

/** 400 naming the first store a profile (or agent) mounts that does not exist: checked when it is saved. */
export async function assertStoresExist(db: Kysely<DB>, tenantId: string, mounts: readonly MemoryMount[] | undefined, field = 'memoryStores'): Promise<void> {
  if (!mounts?.length) return;
  const found = new Set((await withTenant(db, tenantId, (tx) => getStoresByName(tx, mounts.map((m) => m.name)))).map((s) => s.name));
  const missing = mounts.findIndex((m) => !found.has(m.name));
  if (missing >= 0) throw badRequest(`${field}.${missing}.name: unknown memory store: ${mounts[missing].name} (create it with POST /api/memory-stores)`);
}

/** The stores a run mounts, as its tools show them: usable (with what its partition holds) or why not. */
export async function mountsOfRun(deps: MemoryDeps, principal: Principal): Promise<MemoryMountView[]> {
  const runId = runIdOf(principal);
  if (!runId) throw badRequest('the memory mounts of a run are read with its run token');
  return withTenant(deps.db, principal.tenantId, async (tx) => {
    const run = await runMemory(tx, runId);
    if (!run) throw notFound(`unknown run: ${runId}`);
    const stores = new Map((await getStoresByName(tx, run.mounts.map((m) => m.name))).map((s) => [s.name, s]));
    const views: MemoryMountView[] = [];
    for (const m of run.mounts) {
      const s = stores.get(m.name);
      if (!s) {
        const limits = { maxEntries: 0, maxEntryBytes: 0, maxTotalBytes: 0 };
        views.push({ name: m.name, description: '', scope: 'shared', access: m.access, available: false, reason: `memory store ${m.name} no longer exists`, limits });
        continue;
      }
      const base = { name: s.name, description: s.description, scope: s.scope, access: m.access, limits: limitsOf(deps.config, s) };
      if (s.scope === 'per_user' && !run.endUserId) views.push({ ...base, available: false, reason: noRunEndUser(s.name) });
      else views.push({ ...base, available: true, usage: await partitionUsage(tx, s.id, s.scope === 'per_user' ? run.endUserId! : '') });
    }
    return views;
  });
}

export const SEARCH_MAX = 50;

/**
 * Full-text search: a person searches one store (one end user's part of a per_user store); a run searches the stores
 * it mounts and may reach (or one of them), never another end user's memory.
 */
export async function searchMemory(deps: MemoryDeps, caller: { principal: Principal; userId?: string }, q: string, opts: { store?: string; limit?: number }): Promise<MemorySearchHit[]> {
  if (!q.trim()) throw badRequest('q: words to search for');
  const limit = Math.min(Math.max(opts.limit ?? 10, 1), SEARCH_MAX);
  return withTenant(deps.db, caller.principal.tenantId, async (tx) => {
    const runId = runIdOf(caller.principal);
    let names: string[];
    if (runId && !opts.store) {
      const run = await runMemory(tx, runId);
      names = run?.mounts.map((m) => m.name) ?? [];
    } else {
      if (!opts.store) throw badRequest('store: the memory store to search');
      names = [opts.store];
    }
    const where = [];
    for (const name of names) {
      try {
        const t = await targetOf(tx, deps.config, caller.principal, name, caller.userId);
        where.push({ storeId: t.store.id, partition: t.partition, store: t.store.name });
      } catch (err) {
        // searching every mount skips the ones this run cannot reach (gone, or per_user without an end user)
        if (opts.store || !(err instanceof AppError)) throw err;
      }
    }
    return searchEntries(tx, where, q, limit);
  });
}
