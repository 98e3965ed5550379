import { usageError } from '../client/exit.ts';
import { ApiError, type Api } from '../client/http.ts';

/**
 * The resource kinds `svc get | create | delete | apply` manage as files, and how each maps onto the API: how to find
 * one by name, create, update and delete it, and which of its fields the server computes (left out of diffs and of
 * what `svc get` prints for a file). Applied in this order (a pool names profiles; automations and workflow nodes run them).
 */
export type Obj = Record<string, unknown>;

export interface Kind {
  kind: 'profile' | 'pool' | 'automation' | 'workflow';
  /** Other words a user may write: plural, variant B's `pod`, the alias `schedule`. */
  aliases: readonly string[];
  /** Fields the server computes: never compared, never printed into a file. */
  computed: readonly string[];
  /** An update replaces the whole object: a field the file leaves out is removed (profiles). Otherwise it is kept. */
  replaces: boolean;
  list(api: Api): Promise<Obj[]>;
  find(api: Api, name: string): Promise<Obj | undefined>;
  create(api: Api, doc: Obj): Promise<Obj>;
  /** `changed`: the changed fields, for kinds whose update takes only those. */
  update(api: Api, current: Obj, doc: Obj, changed: string[]): Promise<Obj>;
  remove(api: Api, current: Obj): Promise<void>;
  /** One row of `svc get <kind>`, and the header above the rows in a terminal. */
  row(o: Obj): Array<string | number | boolean | null | undefined>;
  header: string[];
}

const enc = encodeURIComponent;
const absent = (err: unknown): undefined => {
  if (err instanceof ApiError && err.status === 404) return undefined;
  throw err;
};
const post = async (api: Api, path: string, body: unknown) => (await api.request<Obj>('POST', path, { body })).data;
const send = async (api: Api, method: string, path: string, body?: unknown) => (await api.request<Obj>(method, path, body === undefined ? {} : { body })).data;
const without = (o: Obj, keys: readonly string[]) => Object.fromEntries(Object.entries(o).filter(([k]) => !keys.includes(k)));

const profile: Kind = {
  kind: 'profile',
  aliases: ['profiles', 'agent', 'agents'],
  computed: ['id', 'pinned', 'workerPlacement'],
  replaces: true,
  list: (api) => api.get<Obj[]>('/api/profiles'),
  find: (api, name) => api.get<Obj>(`/api/profiles/${enc(name)}`).catch(absent),
  create: (api, doc) => post(api, '/api/profiles', doc),
  update: (api, _current, doc) => send(api, 'PUT', `/api/profiles/${enc(String(doc.name))}`, doc),
  remove: async (api, current) => void (await send(api, 'DELETE', `/api/profiles/${enc(String(current.name))}`)),
  row: (p) => [p.name as string, p.runtime as string, (p.model as string) ?? null, p.pinned ? 'pinned' : ''],
  header: ['name', 'runtime', 'model', 'pinned'],
};

const pool: Kind = {
  kind: 'pool',
  aliases: ['pools', 'pod', 'pods'],
  computed: ['id', 'pinned'],
  replaces: false,
  list: (api) => api.get<Obj[]>('/api/pods'),
  find: (api, name) => api.get<Obj>(`/api/pods/${enc(name)}`).catch(absent),
  create: (api, doc) => post(api, '/api/pods', doc),
  // a pod is updated with its supplied fields (PATCH /api/pods/{name}); its name is its key
  update: (api, _current, doc, changed) => send(api, 'PATCH', `/api/pods/${enc(String(doc.name))}`, Object.fromEntries(changed.map((k) => [k, doc[k]]))),
  remove: async (api, current) => void (await send(api, 'DELETE', `/api/pods/${enc(String(current.name))}`)),
  row: (p) => [p.name as string, `${((p.members as unknown[]) ?? []).length} members`, (p.description as string) ?? null, p.pinned ? 'pinned' : ''],
  header: ['name', 'members', 'description', 'pinned'],
};

const automation: Kind = {
  kind: 'automation',
  aliases: ['automations', 'schedule', 'schedules'],
  computed: ['id', 'status', 'nextRunAt', 'lastFiredAt', 'consecutiveFailures', 'createdAt', 'updatedAt', 'deletedAt'],
  replaces: false,
  list: (api) => api.get<Obj[]>('/api/automations?limit=200'),
  async find(api, name) {
    // names are unique among live automations; `q` narrows the page to names, profiles and prompts containing it
    const page = await api.get<Obj[]>(`/api/automations?limit=200&q=${enc(name)}`);
    return page.find((a) => a.name === name && !a.deletedAt);
  },
  create: (api, doc) => post(api, '/api/automations', doc),
  // PUT takes the body of create minus the name (an automation is not renamed)
  update: (api, current, doc) => send(api, 'PUT', `/api/automations/${enc(String(current.id))}`, without(doc, ['name'])),
  remove: async (api, current) => void (await send(api, 'DELETE', `/api/automations/${enc(String(current.id))}`)),
  row: (a) => [a.name as string, a.profile as string, a.cron as string, a.status as string],
  header: ['name', 'profile', 'cron', 'status'],
};

/** Every workflow definition (the list is paged by 200, the cap of workflow lists). */
async function allDefinitions(api: Api): Promise<Obj[]> {
  const all: Obj[] = [];
  for (let offset = 0; ; offset += 200) {
    const page = await api.get<Obj[]>(`/api/workflows/definitions?limit=200&offset=${offset}`);
    all.push(...page);
    if (page.length < 200) return all;
  }
}

const unwrap = (o: Obj) => (o.workflowDefinition ?? o) as Obj;

const workflow: Kind = {
  kind: 'workflow',
  aliases: ['workflows', 'workflow-definition', 'workflow-definitions', 'workflowdefinition', 'definition', 'definitions'],
  computed: ['id', 'createdAt', 'updatedAt'],
  replaces: false,
  list: allDefinitions,
  async find(api, name) {
    // definition names are not unique on the server; a file names one, so two of that name is a problem to fix first
    const named = (await allDefinitions(api)).filter((d) => d.name === name);
    if (named.length > 1) throw usageError(`${named.length} workflow definitions are named ${name} (${named.map((d) => d.id).join(', ')}); delete or rename all but one`);
    return named[0];
  },
  create: async (api, doc) => unwrap(await post(api, '/api/workflows/definitions', doc)),
  update: async (api, current, doc, changed) => unwrap(await send(api, 'PUT', `/api/workflows/definitions/${enc(String(current.id))}`, Object.fromEntries(changed.map((k) => [k, doc[k]])))),
  remove: async (api, current) => void (await send(api, 'DELETE', `/api/workflows/definitions/${enc(String(current.id))}`)),
  row: (d) => [d.name as string, `${((d.nodes as unknown[]) ?? []).length} nodes`, d.id as string],
  header: ['name', 'nodes', 'id'],
};

export const KINDS: readonly Kind[] = [profile, pool, automation, workflow];

export function kindOf(word: string): Kind | undefined {
  const w = word.trim().toLowerCase();
  return KINDS.find((k) => k.kind === w || k.aliases.includes(w));
}

export const KIND_WORDS = KINDS.map((k) => k.kind).join(', ');
