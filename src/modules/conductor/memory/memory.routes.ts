import { Hono, type Context } from 'hono';
import { memoryPathProblem } from '../../../contracts/memory.ts';
import { badRequest, forbidden } from '../../../shared/errors.ts';
import { parseJsonBody, readJson, readJsonWith } from '../../../shared/http.ts';
import { doc } from '../../../shared/route-doc.ts';
import { noContent, pageOf, sendList } from '../../crud/index.ts';
import type { IdentityEnv } from '../identity/index.ts';
import { deleteEntryAt, getVersionOf, listEntriesOf, listVersionsOf, readEntry, renameEntry, restoreVersion, writeEntry, type Caller, type MemoryDeps } from './entries.service.ts';
import * as v from 'valibot';
import {
  CreateStore,
  DeleteEntryQuery,
  EntriesQuery,
  EntrySummary,
  EntryView,
  MountSearchQuery,
  MountView,
  PagedQuery,
  RenameEntry,
  RestoreVersion,
  SearchHit,
  SearchQuery,
  StoreUser,
  StoreView,
  UpdateStore,
  UserQuery,
  VersionsQuery,
  VersionView,
  WriteEntry,
} from './memory.schema.ts';
import { runIdOf } from './access.ts';
import { createStore, deleteStoreBy, getStoreView, listStoreViews, listUsers, mountsOfRun, searchMemory, updateStoreBy } from './stores.service.ts';

/**
 * `/api/memory-stores`: stores (list, create, read, PATCH, delete), a per_user store's end users, and the entries of
 * one partition addressed by path (`/entries/customers/acme.md` is the entry `/customers/acme.md`): list, read, write
 * (PUT, `expectedVersion` for optimistic concurrency), delete, rename, search, versions and restore. A per_user store
 * takes `userId` (query or body) naming whose memory; a run's token reaches its own end user's only.
 * `/api/memory-mounts`: what a run mounts, and search across it (run tokens; the memory tools call these).
 */
const LISTS = { defaultLimit: 200, max: 1000 };
const VERSIONS = { defaultLimit: 50, max: 200 };

function caller(c: Context<IdentityEnv>, bodyUserId?: string): Caller {
  const userId = bodyUserId ?? c.req.query('userId');
  return { principal: c.get('principal'), ...(userId !== undefined && userId !== '' ? { userId } : {}) };
}

function pathOf(c: Context<IdentityEnv>): string {
  const path = `/${c.req.param('path') ?? ''}`;
  const problem = memoryPathProblem(path);
  if (problem) throw badRequest(`path: ${problem}`);
  return path;
}

function versionQuery(c: Context): number | undefined {
  const raw = c.req.query('expectedVersion');
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw badRequest('expectedVersion: an integer of at least 0');
  return n;
}

/** A run's token reaches entries of the stores it mounts, never the stores themselves nor other end users' names. */
function peopleOnly(c: Context<IdentityEnv>): void {
  if (runIdOf(c.get('principal'))) throw forbidden('a run reaches the memory stores it mounts through their entries and /api/memory-mounts, not the stores themselves');
}

export function memoryRoutes(deps: MemoryDeps): Hono<IdentityEnv> {
  // the store-level routes: a person's tenant (entries go through `caller`, which a run may be)
  const tenant = (c: Context<IdentityEnv>) => {
    peopleOnly(c);
    return c.get('principal').tenantId;
  };
  const store = (c: Context<IdentityEnv>) => c.req.param('store')!;
  return new Hono<IdentityEnv>()
    .get('/', doc({ summary: 'List memory stores', description: 'The tenant\'s memory stores with their limits and what each holds. With `limit`, a page and X-Total-Count. Not for run tokens (403).', query: PagedQuery, response: v.array(StoreView), errors: [403] }), async (c) => {
      const page = pageOf(c);
      return sendList(c, page, await listStoreViews(deps, tenant(c), page));
    })
    .post('/', doc({ summary: 'Create a memory store', description: 'A named store of text entries that profiles mount (`memoryStores`). `scope: per_user` keeps one memory per end user. Limits default to, and may not exceed, the operator\'s ceilings. 409 when the name is taken.', body: CreateStore, response: StoreView, status: 201, errors: [403, 409] }), async (c) => c.json(await createStore(deps, tenant(c), await readJson(c, CreateStore)), 201))
    .get('/:store', doc({ summary: 'Get a memory store', description: 'One store by name, with its limits and usage.', response: StoreView, errors: [403] }), async (c) => c.json(await getStoreView(deps, tenant(c), { name: store(c) })))
    .patch('/:store', doc({ summary: 'Change a memory store', description: 'Changes the description, limits and metadata sent; the name and scope are fixed (sent back unchanged they are accepted).', body: UpdateStore, response: StoreView, errors: [403] }), async (c) => c.json(await updateStoreBy(deps, tenant(c), { name: store(c) }, await readJson(c, UpdateStore))))
    .delete('/:store', doc({ summary: 'Delete a memory store', description: 'Deletes the store with every entry and version; profiles that mount it then see it as gone.', status: 204, errors: [403] }), async (c) => {
      await deleteStoreBy(deps, tenant(c), { name: store(c) });
      return noContent(c);
    })
    .get('/:store/users', doc({ summary: 'List a store\'s end users', description: 'A per_user store\'s end users, with what each one\'s memory holds (a shared store answers 400). 200 a page by default, with X-Total-Count.', query: PagedQuery, response: v.array(StoreUser), errors: [403] }), async (c) => {
      const page = pageOf(c, LISTS);
      return sendList(c, page, await listUsers(deps, tenant(c), store(c), page));
    })
    .get('/:store/entries', doc({ summary: 'List memory entries', description: 'The entries of one partition (a per_user store takes `userId`) under `prefix`, without their content; 200 a page by default, with X-Total-Count. A run token reaches only the stores its run mounts.', query: EntriesQuery, response: v.array(EntrySummary), errors: [403] }), async (c) => {
      const page = pageOf(c, LISTS);
      return sendList(c, page, await listEntriesOf(deps, caller(c), store(c), c.req.query('prefix') ?? '/', page));
    })
    .get('/:store/entries/:path{.+}', doc({ summary: 'Read a memory entry', description: 'The entry at the path (`/entries/notes/a.md` is `/notes/a.md`), with its content and version.', query: UserQuery, response: EntryView, errors: [403] }), async (c) => c.json(await readEntry(deps, caller(c), store(c), pathOf(c))))
    .put('/:store/entries/:path{.+}', doc({ summary: 'Write a memory entry', description: 'Creates (201) or replaces (200) the entry at the path; every write is a new version. `expectedVersion` guards against lost updates: 0 creates only, n writes only over version n (409 otherwise). 413 past the store\'s limits; 403 for a run that mounts the store read-only.', body: WriteEntry, response: EntryView, errors: [403, 409, 413] }), async (c) => {
      const path = pathOf(c);
      const body = await readJson(c, WriteEntry);
      const { entry, created } = await writeEntry(deps, caller(c, body.userId), store(c), path, body);
      return c.json(entry, created ? 201 : 200);
    })
    .delete('/:store/entries/:path{.+}', doc({ summary: 'Delete a memory entry', description: 'Deletes the entry (its versions stay, and a delete is one). `expectedVersion` deletes only that version (409 otherwise).', query: DeleteEntryQuery, status: 204, errors: [403, 409] }), async (c) => {
      await deleteEntryAt(deps, caller(c), store(c), pathOf(c), versionQuery(c));
      return noContent(c);
    })
    .post('/:store/rename', doc({ summary: 'Rename a memory entry', description: 'Moves the entry at `from` to `to` (a new version); 409 when `to` exists or `expectedVersion` does not match.', body: RenameEntry, response: EntryView, errors: [403, 409] }), async (c) => {
      const body = await readJson(c, RenameEntry);
      return c.json(await renameEntry(deps, caller(c, body.userId), store(c), body));
    })
    .get('/:store/search', doc({ summary: 'Search a memory store', description: 'Full-text search of one store (one end user\'s part of a per_user store): the best matches first, each with a snippet.', query: SearchQuery, response: v.array(SearchHit), errors: [403] }), async (c) => c.json(await searchMemory(deps, caller(c), c.req.query('q') ?? '', { store: store(c), limit: limitQuery(c) })))
    .get('/:store/versions', doc({ summary: 'List memory versions', description: 'The history of a partition\'s entries, newest first (50 a page by default, with X-Total-Count), narrowed by `path` or `entryId`; without content.', query: VersionsQuery, response: v.array(VersionView), errors: [403] }), async (c) => {
      const page = pageOf(c, VERSIONS);
      const filter = { path: c.req.query('path') || undefined, entryId: c.req.query('entryId') || undefined };
      return sendList(c, page, await listVersionsOf(deps, caller(c), store(c), filter, page));
    })
    .get('/:store/versions/:id', doc({ summary: 'Get a memory version', description: 'One version with its content (null for a delete).', query: UserQuery, response: VersionView, errors: [403] }), async (c) => c.json(await getVersionOf(deps, caller(c), store(c), c.req.param('id'))))
    .post('/:store/versions/:id/restore', doc({ summary: 'Restore a memory version', description: 'Writes the version\'s content back as the entry\'s newest version (at its path then). The body is optional; `expectedVersion` guards the current version (409 otherwise).', body: RestoreVersion, response: EntryView, errors: [403, 409] }), async (c) => {
      const text = await c.req.text();
      const body = text.trim() ? optionalBody(c, text) : {};
      return c.json(await restoreVersion(deps, caller(c, body.userId), store(c), c.req.param('id'), body.expectedVersion));
    });
}

/** `/api/memory-mounts`: the run's mounts, and search across the ones it can reach. */
export function mountRoutes(deps: MemoryDeps): Hono<IdentityEnv> {
  return new Hono<IdentityEnv>()
    .get('/', doc({ summary: 'List a run\'s memory mounts', description: 'With a run token: the memory stores the run\'s profile mounts, each usable (with what the run\'s partition holds) or why not. Other credentials answer 400.', response: v.array(MountView), errors: [400] }), async (c) => c.json(await mountsOfRun(deps, c.get('principal'))))
    .get('/search', doc({ summary: 'Search a run\'s memory', description: 'With a run token: full-text search across the stores the run mounts and may reach (or the one named by `store`), never another end user\'s memory.', query: MountSearchQuery, response: v.array(SearchHit), errors: [403] }), async (c) => c.json(await searchMemory(deps, { principal: c.get('principal') }, c.req.query('q') ?? '', { store: c.req.query('store') || undefined, limit: limitQuery(c) })));
}

function limitQuery(c: Context): number | undefined {
  const raw = c.req.query('limit');
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw badRequest('limit: an integer of at least 1');
  return n;
}

/** A restore's body is optional: parsed and checked only when sent. */
function optionalBody(c: Context, text: string) {
  const body = parseJsonBody(text);
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw badRequest('body: expected a JSON object');
  return readJsonWith(c, RestoreVersion, body);
}
