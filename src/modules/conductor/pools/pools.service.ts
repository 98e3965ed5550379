import type { Kysely } from 'kysely';
import { withTenant, type DB } from '../../../db/index.ts';
import type { PoolSpec } from '../../../contracts/runner.client.ts';
import { conflict, notFound } from '../../../shared/errors.ts';
import { prefixedId } from '../../../shared/ids.ts';
import type { Page } from '../../crud/index.ts';
import { deleteSpec, getPinnedSpec, insertSpec, listSpecs, replacePool, setPinned, type Spec } from '../profiles/profiles.repo.ts';
import type { Broadcaster } from '../runners/broadcast.ts';
import type { PodPatch, PoolBody } from './pool.schema.ts';

/**
 * Pools and pods: one resource in one table, served as `/api/pools` (variant A: list, create, delete) and `/api/pods`
 * (variant B: also get, update of supplied fields, pin, members). Every change is broadcast to the runners.
 */
export interface PoolDeps {
  db: Kysely<DB>;
  broadcaster: Broadcaster;
}

const broadcast = (deps: PoolDeps, tenantId: string, spec: Spec) => {
  const { pinned: _pinned, ...pool } = spec;
  return deps.broadcaster.send((r) => r.putPool(tenantId, pool as PoolSpec));
};

export function listPools(deps: PoolDeps, tenantId: string, page: Page, opts: { pinned?: boolean } = {}) {
  return withTenant(deps.db, tenantId, (tx) => listSpecs(tx, 'pools', page, opts));
}

export async function getPool(deps: PoolDeps, tenantId: string, name: string): Promise<Spec> {
  const p = await withTenant(deps.db, tenantId, (tx) => getPinnedSpec(tx, 'pools', name));
  if (!p) throw notFound(`unknown pod: ${name}`);
  return p;
}

export async function createPool(deps: PoolDeps, tenantId: string, body: PoolBody, what = 'pool'): Promise<Spec> {
  const spec: Spec = { ...body, id: prefixedId('pool') };
  const created = await withTenant(deps.db, tenantId, (tx) => insertSpec(tx, 'pools', tenantId, spec));
  if (!created) throw conflict(`${what} ${body.name} already exists`);
  await broadcast(deps, tenantId, spec);
  return spec;
}

export async function deletePool(deps: PoolDeps, tenantId: string, name: string, what = 'pool'): Promise<void> {
  if (!(await withTenant(deps.db, tenantId, (tx) => deleteSpec(tx, 'pools', name)))) throw notFound(`unknown ${what}: ${name}`);
  await deps.broadcaster.send((r) => r.deletePool(tenantId, name));
}

/** Read (locked), change, store, broadcast. */
async function updatePool(deps: PoolDeps, tenantId: string, name: string, change: (p: Spec) => Spec): Promise<Spec> {
  const next = await withTenant(deps.db, tenantId, async (tx) => {
    const existing = await getPinnedSpec(tx, 'pools', name, true);
    if (!existing) throw notFound(`unknown pod: ${name}`);
    const spec = change(existing);
    await replacePool(tx, spec);
    return spec;
  });
  await broadcast(deps, tenantId, next);
  return next;
}

export function patchPool(deps: PoolDeps, tenantId: string, name: string, patch: PodPatch): Promise<Spec> {
  return updatePool(deps, tenantId, name, (p) => ({ ...p, ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) }));
}

type Member = { profile: string; role: 'lead' | 'member' };

/** Adds a member, or changes the role of one already there. */
export function addMember(deps: PoolDeps, tenantId: string, name: string, member: Member): Promise<Spec> {
  return updatePool(deps, tenantId, name, (p) => {
    const members = ((p.members as Member[] | undefined) ?? []).filter((m) => m.profile !== member.profile);
    return { ...p, members: [...members, member] };
  });
}

export function removeMember(deps: PoolDeps, tenantId: string, name: string, profile: string): Promise<Spec> {
  return updatePool(deps, tenantId, name, (p) => {
    const members = (p.members as Member[] | undefined) ?? [];
    if (!members.some((m) => m.profile === profile)) throw notFound(`pod ${name} has no member ${profile}`);
    return { ...p, members: members.filter((m) => m.profile !== profile) };
  });
}

export async function pinPool(deps: PoolDeps, tenantId: string, name: string, pinned: boolean): Promise<Spec> {
  return withTenant(deps.db, tenantId, async (tx) => {
    if (!(await setPinned(tx, 'pools', name, pinned))) throw notFound(`unknown pod: ${name}`);
    return (await getPinnedSpec(tx, 'pools', name))!;
  });
}

