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
import { READ_ERRORS, WRITE_ERRORS } from '../wire.schema.ts';
import {
  DeleteMemoryQuery,
  MemoryDeleted,
  MemoryListQuery,
  MemoryObject,
  MemoryPage,
  MemoryStoreDeleted,
  MemoryStoreObject,
  MemoryStorePage,
  MemoryVersionListQuery,
  MemoryVersionObject,
  MemoryVersionPage,
  StoreListQuery,
  UserViewQuery,
  ViewQuery,
} from './memory.schema.ts';

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

const DOCS = {
  create: doc({
    summary: 'Create a memory store',
    description: "A store of text memories addressed by path, which agents mount by name (`memory_stores`). `shared` holds one set for everyone; `per_user` one per end user (`user_id`). Limits default to the server's and may only be lower.",
    body: CreateStore,
    response: MemoryStoreObject,
    errors: [...WRITE_ERRORS, 409],
  }),
  list: doc({ summary: 'List memory stores', description: 'The memory stores of the organisation, oldest first by default.', query: StoreListQuery, response: MemoryStorePage, errors: READ_ERRORS }),
  get: doc({ summary: 'Get a memory store', description: 'The store with its limits and what it holds (entries and bytes, every end user together).', response: MemoryStoreObject, errors: READ_ERRORS }),
  update: doc({ summary: 'Update a memory store', description: 'Changes its description, metadata or limits; a store cannot be renamed (agents mount it by name).', body: UpdateStore, response: MemoryStoreObject, errors: WRITE_ERRORS }),
  delete: doc({ summary: 'Delete a memory store', description: 'Deletes the store with its memories and their versions.', response: MemoryStoreDeleted, errors: WRITE_ERRORS }),
  createMemory: doc({
    summary: 'Create a memory',
    description: 'Writes a new memory at a path (409 `memory_path_conflict_error` when the path is taken; 413 over the store\'s limits). In a per_user store, `user_id` (body or query) names the end user.',
    body: CreateMemory,
    query: UserViewQuery,
    response: MemoryObject,
    errors: [...WRITE_ERRORS, 409, 413],
  }),
  listMemories: doc({ summary: 'List memories', description: 'The memories of the store (of one end user in a per_user store) by path, oldest first by default; `view=full` includes contents (at most 20 a page).', query: MemoryListQuery, response: MemoryPage, errors: READ_ERRORS }),
  getMemory: doc({ summary: 'Get a memory', description: 'One memory by id, with its content unless `view=basic`.', query: ViewQuery, response: MemoryObject, errors: READ_ERRORS }),
  updateMemory: doc({
    summary: 'Update a memory',
    description: 'Changes its content, its path, or both. With a `content_sha256` precondition the change applies only if the memory still has that content (409 `memory_precondition_failed_error` otherwise).',
    body: UpdateMemory,
    query: ViewQuery,
    response: MemoryObject,
    errors: [...WRITE_ERRORS, 409, 413],
  }),
  deleteMemory: doc({ summary: 'Delete a memory', description: 'Deletes the memory; its versions stay, so it can be restored.', query: DeleteMemoryQuery, response: MemoryDeleted, errors: [...WRITE_ERRORS, 409] }),
  listVersions: doc({ summary: 'List memory versions', description: 'Every write of the store\'s memories (or of one, `memory_id`), newest first by default, with who made it.', query: MemoryVersionListQuery, response: MemoryVersionPage, errors: READ_ERRORS }),
  getVersion: doc({ summary: 'Get a memory version', description: 'One version, with its content unless `view=basic`.', query: ViewQuery, response: MemoryVersionObject, errors: READ_ERRORS }),
  restoreVersion: doc({ summary: 'Restore a memory version', description: 'Writes the content and path of that version back as a new version of its memory.', response: MemoryObject, errors: [...WRITE_ERRORS, 409, 413] }),
};

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
    .post('/', DOCS.create, async (c) => {
      const p = await readJson(c, CreateStore);
      const created = await memory.createStore(deps, tenant(c), { name: p.name, description: p.description ?? '', scope: p.scope ?? 'shared', limits: limitsOf(p.limits), ...(p.metadata ? { metadata: p.metadata } : {}) });
      return c.json(storeObject(created));
    })
    .get('/', DOCS.list, async (c) => {
      const q = readCursor(c, 'asc');
      const all = (await memory.listStoreViews(deps, tenant(c), { offset: 0 })).items.map(storeObject);
      return c.json(pageArray(q.order === 'asc' ? all : all.reverse(), q));
    })
    .get('/:memory_store_id', DOCS.get, async (c) => c.json(storeObject(await store(c))))
    .post('/:memory_store_id', DOCS.update, async (c) => {
      const p = await readJson(c, UpdateStore);
      const s = await store(c);
      if (p.name !== undefined && p.name !== s.name) throw badRequest('name: a memory store cannot be renamed (agents mount it by name)');
      const body = { ...(p.description !== undefined ? { description: p.description ?? '' } : {}), ...(p.metadata !== undefined ? { metadata: p.metadata ?? {} } : {}), limits: limitsOf(p.limits) };
      return c.json(storeObject(await memory.updateStoreBy(deps, tenant(c), { id: s.id }, body)));
    })
    .delete('/:memory_store_id', DOCS.delete, async (c) => {
      const id = await memory.deleteStoreBy(deps, tenant(c), { id: c.req.param('memory_store_id') });
      return c.json({ id, type: 'memory_store_deleted' });
    })
    .post('/:memory_store_id/memories', DOCS.createMemory, async (c) => {
      const p = await readJson(c, CreateMemory);
      const s = await store(c);
      const userId = p.user_id ?? (c.req.query('user_id') || undefined);
      const { entry } = await memory.writeEntry(deps, as(c, userId), s.name, p.path, { content: p.content, expectedVersion: 0 }).catch(asV1);
      return c.json(memoryObject(s.id, entry, userId, full(c, 'full')));
    })
    .get('/:memory_store_id/memories', DOCS.listMemories, async (c) => {
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
    .get('/:memory_store_id/memories/:memory_id', DOCS.getMemory, async (c) => {
      const s = await store(c);
      const { entry, userId } = await located(c, s, c.req.param('memory_id'));
      return c.json(memoryObject(s.id, entry, userId, full(c, 'full')));
    })
    .post('/:memory_store_id/memories/:memory_id', DOCS.updateMemory, async (c) => {
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
    .delete('/:memory_store_id/memories/:memory_id', DOCS.deleteMemory, async (c) => {
      const s = await store(c);
      const { caller, entry } = await located(c, s, c.req.param('memory_id'));
      const expected = c.req.query('expected_content_sha256');
      if (expected && expected !== entry.sha256) throw new AppError(409, `memory ${entry.id} no longer has content_sha256 ${expected}; read it again and retry`, { code: 'memory_precondition_failed_error' });
      await memory.deleteEntryAt(deps, caller, s.name, entry.path, entry.version).catch(asV1);
      return c.json({ id: entry.id, type: 'memory_deleted' });
    })
    .get('/:memory_store_id/memory_versions', DOCS.listVersions, async (c) => {
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
    .get('/:memory_store_id/memory_versions/:memory_version_id', DOCS.getVersion, async (c) => {
      const s = await store(c);
      const id = c.req.param('memory_version_id');
      const at = await memory.locate(deps, tenant(c), s.id, { versionId: id });
      if (!at) throw notFound(`No memory version found with id '${id}'.`);
      const userId = at.partition || undefined;
      return c.json(versionObject(s.id, await memory.getVersionOf(deps, as(c, userId), s.name, id), userId, full(c, 'full')));
    })
    .post('/:memory_store_id/memory_versions/:memory_version_id/restore', DOCS.restoreVersion, async (c) => {
      const s = await store(c);
      const id = c.req.param('memory_version_id');
      const at = await memory.locate(deps, tenant(c), s.id, { versionId: id });
      if (!at) throw notFound(`No memory version found with id '${id}'.`);
      const userId = at.partition || undefined;
      const restored = await memory.restoreVersion(deps, as(c, userId), s.name, id).catch(asV1);
      return c.json(memoryObject(s.id, restored, userId, true));
    });
}
