import { Hono, type Context } from 'hono';
import { memoryPathProblem } from '../../../contracts/memory.ts';
import { badRequest, forbidden } from '../../../shared/errors.ts';
import { parseJsonBody, readJson, readJsonWith } from '../../../shared/http.ts';
import { doc } from '../../../shared/route-doc.ts';
import { noContent, pageOf, sendList } from '../../crud/index.ts';
import type { IdentityEnv } from '../identity/index.ts';
import { deleteEntryAt, getVersionOf, listEntriesOf, listVersionsOf, readEntry, renameEntry, restoreVersion, writeEntry, type Caller, type MemoryDeps } from './entries.service.ts';
import { CreateStore, RenameEntry, RestoreVersion, UpdateStore, WriteEntry } from './memory.schema.ts';
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
    .get('/', async (c) => {
      const page = pageOf(c);
      return sendList(c, page, await listStoreViews(deps, tenant(c), page));
    })
    .post('/', doc({ body: CreateStore }), async (c) => c.json(await createStore(deps, tenant(c), await readJson(c, CreateStore)), 201))
    .get('/:store', async (c) => c.json(await getStoreView(deps, tenant(c), { name: store(c) })))
    .patch('/:store', doc({ body: UpdateStore }), async (c) => c.json(await updateStoreBy(deps, tenant(c), { name: store(c) }, await readJson(c, UpdateStore))))
    .delete('/:store', async (c) => {
      await deleteStoreBy(deps, tenant(c), { name: store(c) });
      return noContent(c);
    })
    .get('/:store/users', async (c) => {
      const page = pageOf(c, LISTS);
      return sendList(c, page, await listUsers(deps, tenant(c), store(c), page));
    })
    .get('/:store/entries', async (c) => {
      const page = pageOf(c, LISTS);
      return sendList(c, page, await listEntriesOf(deps, caller(c), store(c), c.req.query('prefix') ?? '/', page));
    })
    .get('/:store/entries/:path{.+}', async (c) => c.json(await readEntry(deps, caller(c), store(c), pathOf(c))))
    .put('/:store/entries/:path{.+}', doc({ body: WriteEntry }), async (c) => {
      const path = pathOf(c);
      const body = await readJson(c, WriteEntry);
      const { entry, created } = await writeEntry(deps, caller(c, body.userId), store(c), path, body);
      return c.json(entry, created ? 201 : 200);
    })
    .delete('/:store/entries/:path{.+}', async (c) => {
      await deleteEntryAt(deps, caller(c), store(c), pathOf(c), versionQuery(c));
      return noContent(c);
    })
    .post('/:store/rename', doc({ body: RenameEntry }), async (c) => {
      const body = await readJson(c, RenameEntry);
      return c.json(await renameEntry(deps, caller(c, body.userId), store(c), body));
    })
    .get('/:store/search', async (c) => c.json(await searchMemory(deps, caller(c), c.req.query('q') ?? '', { store: store(c), limit: limitQuery(c) })))
    .get('/:store/versions', async (c) => {
      const page = pageOf(c, VERSIONS);
      const filter = { path: c.req.query('path') || undefined, entryId: c.req.query('entryId') || undefined };
      return sendList(c, page, await listVersionsOf(deps, caller(c), store(c), filter, page));
    })
    .get('/:store/versions/:id', async (c) => c.json(await getVersionOf(deps, caller(c), store(c), c.req.param('id'))))
    .post('/:store/versions/:id/restore', doc({ body: RestoreVersion }), async (c) => {
      const text = await c.req.text();
      const body = text.trim() ? optionalBody(c, text) : {};
      return c.json(await restoreVersion(deps, caller(c, body.userId), store(c), c.req.param('id'), body.expectedVersion));
    });
}

/** `/api/memory-mounts`: the run's mounts, and search across the ones it can reach. */
export function mountRoutes(deps: MemoryDeps): Hono<IdentityEnv> {
  return new Hono<IdentityEnv>()
    .get('/', async (c) => c.json(await mountsOfRun(deps, c.get('principal'))))
    .get('/search', async (c) => c.json(await searchMemory(deps, { principal: c.get('principal') }, c.req.query('q') ?? '', { store: c.req.query('store') || undefined, limit: limitQuery(c) })));
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
