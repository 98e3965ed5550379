import type { Kysely } from 'kysely';
import { withTenant, type DB, type Tx } from '../../../db/index.ts';
import { AppError, badRequest, conflict, forbidden, notFound } from '../../../shared/errors.ts';
import type { PrivateAddresses } from '../../../shared/egress/index.ts';
import type { SandboxLimitsService } from '../sandbox-limits/index.ts';
import type { SandboxLimitsOverride } from '../../../contracts/sandbox-limits.ts';
import { mcpUrlProblem } from '../runs/mcp-address.ts';
import { randomId } from '../../../shared/ids.ts';
import type { Broadcaster } from '../runners/broadcast.ts';
import type { Fleet } from '../runners/fleet.ts';
import { assertCommandSandbox } from '../runners/sandbox-check.ts';
import { copyKit, copyPlan, type CopyPlan, type CopyResult } from './copy.service.ts';
import type { CreateKit, KitManifest, PreviewKit } from './kit.schema.ts';
import {
  insertKit,
  insertKitEvent,
  kitEventCounts,
  kitById,
  kitsBySlug,
  listCopied,
  listOwnKits,
  ownKit,
  ownKitById,
  recordCopy,
  updateKit,
  withKitRead,
  type KitRow,
} from './kits.repo.ts';
import { readable, sourceOf, takeSnapshot } from './snapshot.ts';

/**
 * Kits (API spelling: templates): create a sanitized snapshot of a pool, agent or automation, edit its label and
 * description, delete it (readers then get 410), read it signed in or publicly, use it (preview, copy plan, copy),
 * republish it (a new snapshot, `version` + 1). A kit is named by its slug (`/api/templates/{slug}`) or by its id
 * (`/api/kits/{id}`, the saved kit itself: `KitRef`).
 */
export interface KitDeps {
  db: Kysely<DB>;
  broadcaster: Broadcaster;
  /** The runners, asked whether they can sandbox commands before a profile with `run_command` is copied in. */
  fleet: Fleet;
  /** SVC_PRIVATE_ADDRESSES: a kit's profile whose MCP server URL the address policy refuses is not copied in (400). */
  privateAddresses?: PrivateAddresses;
  /** A kit's profile whose `limits` pass the operator's or this tenant's ceilings is not copied in (400). */
  sandboxLimits: Pick<SandboxLimitsService, 'assertWithin'>;
}

export interface Author {
  tenantId: string;
  tenantName: string | null;
}

/** Where a signed-in slug read looks: `org` (a tenant handle) narrows, `id` picks an exact saved snapshot. */
export interface SlugQuery {
  org?: string;
  id?: string;
}

type StoredManifest = KitManifest & { schedules?: string[] };

/** A kit as a route names it: by slug (with the reader's `org`/`id` narrowing) or by its id. */
export type KitRef = { slug: string; q: SlugQuery } | { id: string };

/** The kit a reference names for this reader (signed in: `own` prefers the reader's own kit for a slug). */
const find = (tx: Tx, ref: KitRef, own: string | null): Promise<KitRow> => ('id' in ref ? byId(tx, ref.id) : bySlug(tx, ref.slug, ref.q, own));

export function toWire(k: KitRow) {
  const { schedules: _s, ...manifest } = k.manifest as StoredManifest;
  return { ...summary(k), manifest: readable(manifest) };
}

export function summary(k: KitRow) {
  return {
    id: k.id,
    slug: k.slug,
    label: k.label,
    description: k.description,
    kind: k.kind,
    source: { [k.kind]: k.sourceName },
    version: k.version,
    builtIn: k.builtIn,
    authorHandle: k.authorHandle,
    authorName: k.authorName,
    counts: { profiles: k.manifest.profiles.length, skills: k.manifest.skills.length, automations: k.manifest.automations.length },
    createdAt: k.createdAt,
    updatedAt: k.updatedAt,
  };
}

const gone = (k: KitRow) => new AppError(410, `kit ${k.slug} (${k.id}) was deleted by its owner`);

/** The kit a slug names for this reader; `own` prefers the reader's own kit over other tenants' (signed-in reads). */
async function bySlug(tx: Tx, slug: string, q: SlugQuery, own: string | null): Promise<KitRow> {
  if (q.id) {
    const k = await kitById(tx, q.id);
    if (!k || k.slug !== slug || (q.org !== undefined && k.tenantId !== q.org)) throw notFound(`unknown kit: ${slug} with id ${q.id}`);
    if (k.deletedAt) throw gone(k);
    return k;
  }
  const rows = await kitsBySlug(tx, slug, q.org);
  const live = rows.filter((k) => !k.deletedAt);
  const mine = own === null ? undefined : live.find((k) => k.tenantId === own);
  if (mine) return mine;
  if (live.length === 1) return live[0];
  if (live.length > 1) throw conflict(`slug ${slug} is ambiguous: add org= one of ${live.map((k) => k.authorHandle).join(', ')}`);
  if (rows.length) throw gone(rows[0]);
  throw notFound(`unknown kit: ${slug}`);
}

async function byId(tx: Tx, id: string): Promise<KitRow> {
  const k = await kitById(tx, id);
  if (!k) throw notFound(`unknown kit: ${id}`);
  if (k.deletedAt) throw gone(k);
  return k;
}

export async function createKit(deps: KitDeps, author: Author, body: CreateKit): Promise<KitRow> {
  const { kind, name } = sourceOf(body.source);
  return withTenant(deps.db, author.tenantId, async (tx) => {
    const manifest: StoredManifest = { ...(await takeSnapshot(tx, body.source, body.schedules)), ...(body.schedules ? { schedules: body.schedules } : {}) };
    const kit = await insertKit(tx, {
      id: `kit-${randomId(20).toLowerCase()}`,
      tenantId: author.tenantId,
      slug: body.slug,
      label: body.label,
      description: body.description,
      kind,
      sourceName: name,
      manifest,
      authorHandle: author.tenantId,
      authorName: author.tenantName ?? author.tenantId,
    });
    if (!kit) throw conflict(`slug taken: a kit named ${body.slug} exists`);
    return kit;
  });
}

export async function previewKit(deps: KitDeps, tenantId: string, body: PreviewKit) {
  const { kind, name } = sourceOf(body.source);
  const manifest = await withTenant(deps.db, tenantId, (tx) => takeSnapshot(tx, body.source, body.schedules));
  return { kind, source: { [kind]: name }, manifest: readable(manifest) };
}

/** The caller's own live kit, by slug or id (another tenant's is unknown here: 404). */
async function own(deps: KitDeps, tenantId: string, ref: string | { id: string }, fn: (tx: Tx, k: KitRow) => Promise<KitRow>): Promise<KitRow> {
  return withTenant(deps.db, tenantId, async (tx) => {
    const k = typeof ref === 'string' ? await ownKit(tx, tenantId, ref) : await ownKitById(tx, tenantId, ref.id);
    if (!k) throw notFound(`unknown kit: ${typeof ref === 'string' ? ref : ref.id}`);
    return fn(tx, k);
  });
}

export const patchKit = (deps: KitDeps, tenantId: string, ref: string | { id: string }, patch: { label?: string; description?: string }) => own(deps, tenantId, ref, (tx, k) => updateKit(tx, k.id, patch));

export async function deleteKit(deps: KitDeps, tenantId: string, ref: string | { id: string }): Promise<void> {
  await own(deps, tenantId, ref, (tx, k) => {
    if (k.builtIn) throw forbidden(`kit ${k.slug} is built in and cannot be deleted`);
    return updateKit(tx, k.id, { deleted: true });
  });
}

/**
 * Republish (by slug) and republish-saved (by the saved kit's id): a new snapshot of the kit's source, `version` + 1.
 * Copies made before keep the version they copied (`GET /api/templates?scope=copied`).
 */
export const republishKit = (deps: KitDeps, tenantId: string, ref: string | { id: string }) =>
  own(deps, tenantId, ref, async (tx, k) => {
    const schedules = (k.manifest as StoredManifest).schedules;
    const manifest: StoredManifest = { ...(await takeSnapshot(tx, { [k.kind]: k.sourceName }, schedules)), ...(schedules ? { schedules } : {}) };
    return updateKit(tx, k.id, { manifest, bumpVersion: true });
  });

export async function listKits(deps: KitDeps, tenantId: string, scope: 'saved' | 'copied') {
  return withKitRead(deps.db, tenantId, async (tx) => {
    if (scope === 'saved') return (await listOwnKits(tx, tenantId)).map(summary);
    return (await listCopied(tx, tenantId)).map(({ kit, copy }) => ({ ...summary(kit), deleted: kit.deletedAt !== null, copiedAt: copy.copiedAt, copiedVersion: copy.version, targetName: copy.targetName }));
  });
}

export const readBySlug = (deps: KitDeps, reader: string | null, slug: string, q: SlugQuery) => withKitRead(deps.db, reader, (tx) => bySlug(tx, slug, q, reader));
export const readById = (deps: KitDeps, reader: string | null, id: string) => withKitRead(deps.db, reader, (tx) => byId(tx, id));

/** The share page's view and click counts: shown to the kit's own tenant only. */
export const kitStats = (deps: KitDeps, id: string) => withKitRead(deps.db, null, (tx) => kitEventCounts(tx, id));

export async function logEvent(deps: KitDeps, id: string, kind: 'view' | 'click', signedIn: boolean): Promise<void> {
  await withKitRead(deps.db, null, async (tx) => {
    await byId(tx, id);
    await insertKitEvent(tx, id, kind, signedIn);
  });
}

export async function planCopy(deps: KitDeps, tenantId: string, ref: KitRef, targetName: string | undefined): Promise<CopyPlan & { kit: { id: string; slug: string; version: number } }> {
  return withKitRead(deps.db, tenantId, async (tx) => {
    const k = await find(tx, ref, tenantId);
    return { kit: { id: k.id, slug: k.slug, version: k.version }, ...(await copyPlan(tx, k.manifest, targetName)) };
  });
}

export async function copyKitInto(deps: KitDeps, tenantId: string, ref: KitRef, targetName: string | undefined) {
  const result: CopyResult & { kit?: { id: string; slug: string; version: number } } = await withKitRead(deps.db, tenantId, async (tx) => {
    const k = await find(tx, ref, tenantId);
    const runners = deps.fleet.members().map((m) => m.info);
    for (const p of k.manifest.profiles) {
      assertCommandSandbox(runners, p.tools as string[] | undefined);
      const servers = (p.mcpServers as Array<{ url?: unknown }> | undefined) ?? [];
      const problem = mcpUrlProblem(servers.flatMap((s, i) => (typeof s.url === 'string' ? [{ url: s.url, field: `profiles.${p.name}.mcpServers.${i}.url` }] : [])), deps.privateAddresses);
      if (problem) throw badRequest(problem);
      await deps.sandboxLimits.assertWithin(tenantId, p.limits as SandboxLimitsOverride | undefined, `profiles.${p.name}.limits`);
    }
    const r = await copyKit(tx, tenantId, k.manifest, targetName);
    if (r.copied) await recordCopy(tx, tenantId, { kitId: k.id, targetName: r.targetName, version: k.version, created: r.created });
    return { ...r, kit: { id: k.id, slug: k.slug, version: k.version } };
  });
  if (!result.copied) return result;
  for (const p of result.profiles) await deps.broadcaster.send((c) => c.putProfile(tenantId, p));
  const pool = result.pool;
  if (pool) await deps.broadcaster.send((c) => c.putPool(tenantId, pool));
  const { profiles: _p, pool: _pool, ...wire } = result;
  return wire;
}
