import { Hono, type Context } from 'hono';
import * as v from 'valibot';
import { MEMORY_STORE_NAME, MEMORY_STORE_NAME_RULE, memoryPathProblem } from '../../../contracts/memory.ts';
import { AppError, badRequest, isAppError, notFound } from '../../../shared/errors.ts';
import { readJson } from '../../../shared/http.ts';
import { doc } from '../../../shared/route-doc.ts';
import { pageArray, readCursor } from '../../crud/index.ts';
import { memoryStores as memory } from '../../conductor/index.ts';
import type { AgentsEnv } from '../context.ts';
import { Metadata } from '../validation.ts';
import { memoryObject, storeObject, versionObject } from './memory.wire.ts';

/**
 * `/v1/memory_stores`: memory stores on the agents API, in the shape of Claude Managed Agents' memory stores (stores,
 * memories addressed by id, memory versions, `content_sha256` preconditions), over the same services as
 * `/api/memory-stores`. A per_user store takes `user_id` (query or body) where a memory is created or listed; by id, a
 * memory carries its end user. `POST …/memory_versions/{id}/restore` is an svc extension.
 */
const Path = v.pipe(v.string(), v.check((p) => memoryPathProblem(p) === undefined, (i) => memoryPathProblem(String(i.input)) ?? 'invalid path'));
const Count = v.pipe(v.number(), v.integer(), v.minValue(1));
const Limits = v.strictObject({ max_entries: v.optional(Count), max_entry_bytes: v.optional(Count), max_total_bytes: v.optional(Count) });
const UserId = v.pipe(v.string(), v.minLength(1), v.maxLength(256));

const CreateStore = v.object({
  name: v.pipe(v.string(), v.regex(MEMORY_STORE_NAME, MEMORY_STORE_NAME_RULE)),
  description: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(1024)))),
  metadata: v.optional(v.nullable(Metadata)),
  scope: v.optional(v.picklist(['shared', 'per_user'])),
  limits: v.optional(Limits),
});
const UpdateStore = v.object({
  name: v.optional(v.string()),
  description: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(1024)))),
  metadata: v.optional(v.nullable(Metadata)),
  limits: v.optional(Limits),
});
const CreateMemory = v.object({ path: Path, content: v.string(), user_id: v.optional(UserId) });
const Precondition = v.object({ type: v.literal('content_sha256'), content_sha256: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/, '64 lowercase hexadecimal characters')) });
const UpdateMemory = v.object({ content: v.optional(v.string()), path: v.optional(Path), precondition: v.optional(Precondition) });

const limitsOf = (l: v.InferOutput<typeof Limits> | undefined) =>
  l && { ...(l.max_entries !== undefined ? { maxEntries: l.max_entries } : {}), ...(l.max_entry_bytes !== undefined ? { maxEntryBytes: l.max_entry_bytes } : {}), ...(l.max_total_bytes !== undefined ? { maxTotalBytes: l.max_total_bytes } : {}) };

const noMemory = (id: string) => notFound(`No memory found with id '${id}'.`);

/** The conflicts of /api in Claude's error codes: a path taken, a precondition that no longer holds. */
function asV1(err: unknown): never {
  if (isAppError(err) && err.status === 409) {
    const code = err.extra?.code === 'memory_exists' ? 'memory_path_conflict_error' : err.extra?.code === 'memory_conflict' ? 'memory_precondition_failed_error' : 'conflict_error';
    throw new AppError(409, err.message, { code });
  }
  if (isAppError(err) && err.status === 413) throw new AppError(413, err.message, { code: 'memory_limit_exceeded' });
  throw err;
}

export function memoryStoreRoutes(deps: memory.MemoryDeps): Hono<AgentsEnv> {
  const tenant = (c: Context<AgentsEnv>) => c.get('principal').tenantId;
  const store = async (c: Context<AgentsEnv>) => memory.getStoreView(deps, tenant(c), { id: c.req.param('memory_store_id')! });
  const as = (c: Context<AgentsEnv>, userId: string | undefined) => ({ principal: c.get('principal'), ...(userId ? { userId } : {}) });
  const full = (c: Context, fallback: 'basic' | 'full') => {
    const view = c.req.query('view') || fallback;
    if (view !== 'basic' && view !== 'full') throw badRequest("view: expected 'basic' or 'full'");
    return view === 'full';
  };
  /** A memory by id, as the person naming it reaches it (its own end user's partition). */
  const located = async (c: Context<AgentsEnv>, s: memory.StoreView, id: string) => {
    const at = await memory.locate(deps, tenant(c), s.id, { entryId: id });
    if (!at) throw noMemory(id);
    const caller = as(c, at.partition || undefined);
    const entry = await memory.readEntry(deps, caller, s.name, at.path).catch((err) => {
      if (isAppError(err) && err.status === 404) throw noMemory(id);
      throw err;
    });
    if (entry.id !== id) throw noMemory(id);
    return { caller, entry, userId: at.partition || undefined };
  };

  return new Hono<AgentsEnv>()
    .post('/', doc({ body: CreateStore }), async (c) => {
      const p = await readJson(c, CreateStore);
      const created = await memory.createStore(deps, tenant(c), { name: p.name, description: p.description ?? '', scope: p.scope ?? 'shared', limits: limitsOf(p.limits), ...(p.metadata ? { metadata: p.metadata } : {}) });
      return c.json(storeObject(created));
    })
    .get('/', async (c) => {
      const q = readCursor(c, 'asc');
      const all = (await memory.listStoreViews(deps, tenant(c), { offset: 0 })).items.map(storeObject);
      return c.json(pageArray(q.order === 'asc' ? all : all.reverse(), q));
    })
    .get('/:memory_store_id', async (c) => c.json(storeObject(await store(c))))
    .post('/:memory_store_id', doc({ body: UpdateStore }), async (c) => {
      const p = await readJson(c, UpdateStore);
      const s = await store(c);
      if (p.name !== undefined && p.name !== s.name) throw badRequest('name: a memory store cannot be renamed (agents mount it by name)');
      const body = { ...(p.description !== undefined ? { description: p.description ?? '' } : {}), ...(p.metadata !== undefined ? { metadata: p.metadata ?? {} } : {}), limits: limitsOf(p.limits) };
      return c.json(storeObject(await memory.updateStoreBy(deps, tenant(c), { id: s.id }, body)));
    })
    .delete('/:memory_store_id', async (c) => {
      const id = await memory.deleteStoreBy(deps, tenant(c), { id: c.req.param('memory_store_id') });
      return c.json({ id, type: 'memory_store_deleted' });
    })
    .post('/:memory_store_id/memories', doc({ body: CreateMemory }), async (c) => {
      const p = await readJson(c, CreateMemory);
      const s = await store(c);
      const userId = p.user_id ?? (c.req.query('user_id') || undefined);
      const { entry } = await memory.writeEntry(deps, as(c, userId), s.name, p.path, { content: p.content, expectedVersion: 0 }).catch(asV1);
      return c.json(memoryObject(s.id, entry, userId, full(c, 'full')));
    })
    .get('/:memory_store_id/memories', async (c) => {
      const s = await store(c);
      const userId = c.req.query('user_id') || undefined;
      const prefix = c.req.query('path_prefix') || '/';
      const q = readCursor(c, 'asc');
      const withContent = full(c, 'basic');
      if (withContent && q.limit > 20) throw badRequest('limit: at most 20 with view=full');
      const { items } = await memory.listEntriesOf(deps, as(c, userId), s.name, prefix, { offset: 0 });
      const page = pageArray(q.order === 'asc' ? items : items.reverse(), q);
      const data = withContent ? await Promise.all(page.data.map((e) => memory.readEntry(deps, as(c, userId), s.name, e.path))) : page.data;
      return c.json({ ...page, data: data.map((e) => memoryObject(s.id, e, userId, withContent)) });
    })
    .get('/:memory_store_id/memories/:memory_id', async (c) => {
      const s = await store(c);
      const { entry, userId } = await located(c, s, c.req.param('memory_id'));
      return c.json(memoryObject(s.id, entry, userId, full(c, 'full')));
    })
    .post('/:memory_store_id/memories/:memory_id', doc({ body: UpdateMemory }), async (c) => {
      const p = await readJson(c, UpdateMemory);
      const s = await store(c);
      const { caller, entry, userId } = await located(c, s, c.req.param('memory_id'));
      if (p.precondition && p.precondition.content_sha256 !== entry.sha256) {
        // already exactly as asked: answered as a success, as the reference does
        if ((p.content ?? entry.content) === entry.content && (p.path ?? entry.path) === entry.path) return c.json(memoryObject(s.id, entry, userId, full(c, 'full')));
        throw new AppError(409, `memory ${entry.id} no longer has content_sha256 ${p.precondition.content_sha256}; read it again and retry`, { code: 'memory_precondition_failed_error' });
      }
      let next = entry;
      if (p.path !== undefined && p.path !== entry.path) next = await memory.renameEntry(deps, caller, s.name, { from: entry.path, to: p.path, expectedVersion: next.version }).catch(asV1);
      if (p.content !== undefined) next = (await memory.writeEntry(deps, caller, s.name, next.path, { content: p.content, expectedVersion: next.version }).catch(asV1)).entry;
      return c.json(memoryObject(s.id, next, userId, full(c, 'full')));
    })
    .delete('/:memory_store_id/memories/:memory_id', async (c) => {
      const s = await store(c);
      const { caller, entry } = await located(c, s, c.req.param('memory_id'));
      const expected = c.req.query('expected_content_sha256');
      if (expected && expected !== entry.sha256) throw new AppError(409, `memory ${entry.id} no longer has content_sha256 ${expected}; read it again and retry`, { code: 'memory_precondition_failed_error' });
      await memory.deleteEntryAt(deps, caller, s.name, entry.path, entry.version).catch(asV1);
      return c.json({ id: entry.id, type: 'memory_deleted' });
    })
    .get('/:memory_store_id/memory_versions', async (c) => {
      const s = await store(c);
      const memoryId = c.req.query('memory_id') || undefined;
      let userId = c.req.query('user_id') || undefined;
      if (memoryId) userId = (await memory.locate(deps, tenant(c), s.id, { entryId: memoryId }))?.partition || userId;
      const q = readCursor(c, 'desc');
      const { items } = await memory.listVersionsOf(deps, as(c, userId), s.name, { ...(memoryId ? { entryId: memoryId } : {}) }, { limit: 1000, offset: 0 });
      const page = pageArray(q.order === 'desc' ? items : items.reverse(), q);
      const withContent = full(c, 'basic');
      const data = withContent ? await Promise.all(page.data.map((ver) => memory.getVersionOf(deps, as(c, userId), s.name, ver.id))) : page.data;
      return c.json({ ...page, data: data.map((ver) => versionObject(s.id, ver, userId, withContent)) });
    })
    .get('/:memory_store_id/memory_versions/:memory_version_id', async (c) => {
      const s = await store(c);
      const id = c.req.param('memory_version_id');
      const at = await memory.locate(deps, tenant(c), s.id, { versionId: id });
      if (!at) throw notFound(`No memory version found with id '${id}'.`);
      const userId = at.partition || undefined;
      return c.json(versionObject(s.id, await memory.getVersionOf(deps, as(c, userId), s.name, id), userId, full(c, 'full')));
    })
    .post('/:memory_store_id/memory_versions/:memory_version_id/restore', async (c) => {
      const s = await store(c);
      const id = c.req.param('memory_version_id');
      const at = await memory.locate(deps, tenant(c), s.id, { versionId: id });
      if (!at) throw notFound(`No memory version found with id '${id}'.`);
      const userId = at.partition || undefined;
      const restored = await memory.restoreVersion(deps, as(c, userId), s.name, id).catch(asV1);
      return c.json(memoryObject(s.id, restored, userId, true));
    });
}
