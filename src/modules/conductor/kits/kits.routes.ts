import { doc } from '../../../shared/route-doc.ts';
import { Hono, type Context } from 'hono';
import { badRequest } from '../../../shared/errors.ts';
import { parseJsonBody, readJson, readJsonWith } from '../../../shared/http.ts';
import type { Guards } from '../identity/guards.ts';
import type { Limiter } from '../limits/index.ts';
import type { IdentityEnv } from '../identity/index.ts';
import { noContent, tenantOf } from '../../crud/index.ts';
import * as v from 'valibot';
import { CopyKit, CopyPlanQuery, CopyPlanView, CopyResultView, CreateKit, KitEvent, KitListItem, KitListQuery, KitPreview, KitReadView, KitSlugQuery, KitView, PatchKit, PreviewKit } from './kit.schema.ts';
import {
  copyKitInto,
  createKit,
  deleteKit,
  listKits,
  logEvent,
  patchKit,
  planCopy,
  previewKit,
  readById,
  readBySlug,
  kitStats,
  republishKit,
  toWire,
  type KitDeps,
  type KitRef,
  type SlugQuery,
} from './kits.service.ts';

/**
 * `/api/templates` (kits in the API's spelling, by slug) and `/api/kits` (by id), signed in: every route needs a member
 * (seed: "Read access needs member role"); creating, editing, deleting and republishing need an admin.
 * `kitPublicRoutes`: the share-landing reads and the view/click log without a credential.
 */
const slugQuery = (c: Context): SlugQuery => ({ org: c.req.query('org') || undefined, id: c.req.query('id') || undefined });

/** The preview body may name the source at the top level (`{"pool": "x"}`) as well as under `source`. */
async function readPreview(c: Context) {
  const text = await c.req.text();
  const raw = text.trim() ? parseJsonBody(text) : undefined;
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw badRequest('body: expected a JSON object');
  const r = raw as Record<string, unknown>;
  if ('source' in r) return readJsonWith(c, PreviewKit, r);
  const { pool, agent, automation, ...rest } = r;
  const source = Object.fromEntries(Object.entries({ pool, agent, automation }).filter(([, x]) => x !== undefined));
  // the other fields stay where they are: `schedules`, or unknown ones the strict check names
  return readJsonWith(c, PreviewKit, { source, ...rest });
}

/**
 * One face of the kits: `/api/templates` names a kit by its slug (`:slug`, narrowed by `org=` and `id=`), `/api/kits`
 * by its id (`:id`, the saved kit itself: seed 001's `/api/kits/...`). Both list, create, preview, read, edit, delete,
 * plan a copy, copy and republish (republish by slug, republish-saved by id: a new snapshot, `version` + 1).
 */
function kitFace(deps: KitDeps, guards: Guards, key: 'slug' | 'id'): Hono<IdentityEnv> {
  const admin = guards.requireRole<IdentityEnv>('admin', 'managing kits');
  const member = guards.requireRole<IdentityEnv>('member', 'using kits');
  const param = (c: Context) => c.req.param(key) as string;
  /** The kit a reader means (any tenant's shared kit). */
  const ref = (c: Context): KitRef => (key === 'slug' ? { slug: param(c), q: slugQuery(c) } : { id: param(c) });
  /** The caller's own kit, which only its admins change. */
  const mine = (c: Context) => (key === 'slug' ? param(c) : { id: param(c) });
  const at = `/:${key}`;
  const by = key === 'slug' ? 'by its slug' : 'by its id';
  /** A slug read may narrow with `org=` and `id=` (and `targetName=` for a copy plan). */
  const readQuery = key === 'slug' ? { query: KitSlugQuery } : {};
  const face = new Hono<IdentityEnv>().use('*', member);
  // a kit read signed in logs its views and clicks here (the public one: kitPublicRoutes)
  if (key === 'id') {
    face.post('/:id/events', doc({ summary: 'Log a kit view or click', description: 'Counts a view of the kit\'s share page, or a click on its copy button, by a signed-in reader.', body: KitEvent, status: 204, errors: [403, 410] }), async (c) => {
      await logEvent(deps, c.req.param('id'), (await readJson(c, KitEvent)).kind, true);
      return c.body(null, 204);
    });
  }
  return face
    .get('/', doc({ summary: 'List kits', description: 'The tenant\'s own kits (`scope=saved`, the default), or the kits it copied (`scope=copied`: with the version copied, when, and whether the kit was deleted since). Members and up.', query: KitListQuery, response: v.array(KitListItem), errors: [403] }), async (c) => {
      const scope = c.req.query('scope') ?? 'saved';
      if (scope !== 'saved' && scope !== 'copied') throw badRequest('scope: one of saved, copied');
      return c.json(await listKits(deps, tenantOf(c), scope));
    })
    .post('/', doc({ summary: 'Create a kit', description: 'A shareable snapshot of a pool, an agent (profile) or an automation, with the profiles, skills and automations it needs; secrets are left out. Admins and up; 409 when the slug is taken.', body: CreateKit, response: KitView, status: 201, errors: [403, 409] }), admin, async (c) => {
      const body = await readJson(c, CreateKit);
      const p = c.get('principal');
      return c.json(toWire(await createKit(deps, { tenantId: p.tenantId, tenantName: p.tenantName }, body)), 201);
    })
    .post('/preview', doc({ summary: 'Preview a kit', description: 'The snapshot a kit of this source would hold, without saving anything. The source may be named at the top level (`{"pool": "x"}`) too. Members and up.', body: PreviewKit, response: KitPreview, errors: [403] }), async (c) => c.json(await previewKit(deps, tenantOf(c), await readPreview(c))))
    .get(at, doc({ summary: `Get a kit ${by}`, description: 'Any tenant\'s shared kit, with its snapshot; a kit of the caller\'s own tenant adds its view and click counts. 410 when its owner deleted it; 409 when a slug names kits of several tenants (add `org=`).', ...readQuery, response: KitReadView, errors: [403, 409, 410] }), async (c) => {
      const r = ref(c);
      const kit = 'id' in r ? await readById(deps, tenantOf(c), r.id) : await readBySlug(deps, tenantOf(c), r.slug, r.q);
      return c.json({ ...toWire(kit), ...(kit.tenantId === tenantOf(c) ? { stats: await kitStats(deps, kit.id) } : {}) });
    })
    .patch(at, doc({ summary: `Change a kit ${by}`, description: 'Changes the label and description of one of the tenant\'s kits; what else a GET shows is ignored (a new snapshot is a republish). Admins and up.', body: PatchKit, response: KitView, errors: [403] }), admin, async (c) => c.json(toWire(await patchKit(deps, tenantOf(c), mine(c), await readJson(c, PatchKit)))))
    .delete(at, doc({ summary: `Delete a kit ${by}`, description: 'Deletes one of the tenant\'s kits: readers then get 410, and copies made stay. Built-in kits cannot be deleted (403). Admins and up.', status: 204, errors: [403] }), admin, async (c) => {
      await deleteKit(deps, tenantOf(c), mine(c));
      return noContent(c);
    })
    .get(`${at}/copy-plan`, doc({ summary: 'Plan a kit copy', description: 'What copying the kit into the tenant would do, per asset: `new`, `changed` (copied under the suggested free name) or `unchanged` (reused), and whether the root\'s target name is taken. Nothing is written.', query: key === 'slug' ? CopyPlanQuery : v.object({ targetName: CopyPlanQuery.entries.targetName }), response: CopyPlanView, errors: [403, 409, 410] }), async (c) => c.json(await planCopy(deps, tenantOf(c), ref(c), c.req.query('targetName') || undefined)))
    .post(`${at}/copy`, doc({ summary: 'Copy a kit into the tenant', description: 'Writes the kit\'s new and changed assets in one transaction (automations arrive stopped). When the root\'s target name is taken nothing is written and the answer says `already_exists`; 424 when a skill of the kit cannot be installed. The body is optional.', ...readQuery, body: CopyKit, response: CopyResultView, errors: [403, 409, 410, 424] }), async (c) => {
      const { targetName } = (await c.req.text()).trim() ? await readJson(c, CopyKit) : { targetName: undefined };
      return c.json(await copyKitInto(deps, tenantOf(c), ref(c), targetName));
    })
    .post(`${at}/republish`, doc({ summary: `Republish a kit ${by}`, description: 'Takes a new snapshot of the kit\'s source: `version` + 1. Copies made before keep the version they copied. Admins and up.', response: KitView, errors: [403] }), admin, async (c) => c.json(toWire(await republishKit(deps, tenantOf(c), mine(c)))));
}

export function kitRoutes(deps: KitDeps, guards: Guards): Hono<IdentityEnv> {
  return new Hono<IdentityEnv>().route('/templates', kitFace(deps, guards, 'slug')).route('/kits', kitFace(deps, guards, 'id'));
}

/** The anonymous view/click log is capped per kit, so a script cannot grow the log without bound. */
export const PUBLIC_EVENTS_PER_MINUTE = 120;

export function kitPublicRoutes(deps: KitDeps, limiter: Limiter): Hono {
  const capped = limiter.middleware([{ scope: 'kit-events', limit: PUBLIC_EVENTS_PER_MINUTE, periodMs: 60_000, key: (c) => c.req.param('id') }]);
  return new Hono()
    .get('/api/public/templates/:slug', doc({ public: true, summary: 'Read a shared kit by slug (no credential)', description: 'What a kit\'s share page shows, for anyone with the link. 410 when its owner deleted it; 409 when the slug names kits of several tenants (add `org=`).', query: KitSlugQuery, response: KitView, errors: [409, 410] }), async (c) => c.json(toWire(await readBySlug(deps, null, c.req.param('slug'), slugQuery(c)))))
    .get('/api/public/kits/:id', doc({ public: true, summary: 'Read a shared kit by id (no credential)', description: 'What a kit\'s share page shows, for anyone with the link; 410 when its owner deleted it.', response: KitView, errors: [410] }), async (c) => c.json(toWire(await readById(deps, null, c.req.param('id')))))
    .post('/api/public/kits/:id/events', doc({ public: true, summary: 'Log a kit view or click (no credential)', description: 'Counts a view of the kit\'s share page or a click on its copy button by an anonymous reader; at most 120 a minute per kit (429 beyond).', body: KitEvent, status: 204, errors: [410, 429] }), capped, async (c) => {
      await logEvent(deps, c.req.param('id'), (await readJson(c, KitEvent)).kind, false);
      return c.body(null, 204);
    });
}
