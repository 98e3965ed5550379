import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { withTenant } from '../../../db/index.ts';
import type { ProfileSpec } from '../../../contracts/runner.client.ts';
import { badRequest, conflict, notFound } from '../../../shared/errors.ts';
import { prefixedId } from '../../../shared/ids.ts';
import type { Broadcaster } from '../runners/broadcast.ts';
import type { Fleet } from '../runners/fleet.ts';
import type { Page } from '../../crud/index.ts';
import type { ProfileBody } from './profile.schema.ts';
import { deleteSpec, getSpec, insertSpec, listSpecs, replaceProfile, type Spec } from './profiles.repo.ts';
import { workerPlacement } from './placement.ts';
import { assertCommandSandbox } from '../runners/sandbox-check.ts';
import { knownSkillNames } from '../skills/skills.repo.ts';

/** Profiles: stored per tenant, validated against the skill catalog (variant A), broadcast to every runner. */
export interface ProfileDeps {
  db: Kysely<DB>;
  fleet: Fleet;
  broadcaster: Broadcaster;
}

export type Profile = Spec & ProfileBody;

function withPlacement(deps: ProfileDeps, p: Spec): Spec {
  const infos = deps.fleet.members().flatMap((m) => (m.healthy && m.info ? [m.info] : []));
  const placement = workerPlacement(p as { workerMode?: unknown; workerSubstrate?: unknown }, infos);
  return placement ? { ...p, workerPlacement: placement } : p;
}

async function checkSkills(db: Kysely<DB>, tenantId: string, skills: string[] | undefined): Promise<void> {
  if (!skills?.length) return;
  const known = await withTenant(db, tenantId, (tx) => knownSkillNames(tx, skills));
  const missing = skills.filter((s) => !known.some((k) => k.name === s));
  if (missing.length) throw badRequest(`unknown skill: ${missing.join(', ')}`);
}

export async function listProfiles(deps: ProfileDeps, tenantId: string, page: Page) {
  const res = await withTenant(deps.db, tenantId, (tx) => listSpecs(tx, 'profiles', page));
  return { items: res.items.map((p) => withPlacement(deps, p)), total: res.total };
}

export async function getProfile(deps: ProfileDeps, tenantId: string, name: string): Promise<Spec> {
  const p = await withTenant(deps.db, tenantId, (tx) => getSpec(tx, 'profiles', name));
  if (!p) throw notFound(`unknown profile: ${name}`);
  return withPlacement(deps, p);
}

const runnerInfos = (deps: ProfileDeps) => deps.fleet.members().map((m) => m.info);

export async function createProfile(deps: ProfileDeps, tenantId: string, body: ProfileBody): Promise<Spec> {
  assertCommandSandbox(runnerInfos(deps), body.tools);
  await checkSkills(deps.db, tenantId, body.skills);
  const spec: Spec = { ...body, id: body.id ?? prefixedId('prof') };
  const created = await withTenant(deps.db, tenantId, (tx) => insertSpec(tx, 'profiles', tenantId, spec));
  if (!created) throw conflict(`profile ${body.name} already exists`);
  await deps.broadcaster.send((r) => r.putProfile(tenantId, spec as ProfileSpec));
  return withPlacement(deps, spec);
}

export async function replaceProfileByName(deps: ProfileDeps, tenantId: string, name: string, body: ProfileBody): Promise<Spec> {
  if (body.name !== name) throw badRequest(`name: must equal the path name ${name} (profiles cannot be renamed)`);
  assertCommandSandbox(runnerInfos(deps), body.tools);
  await checkSkills(deps.db, tenantId, body.skills);
  const spec = await withTenant(deps.db, tenantId, async (tx) => {
    const existing = await getSpec(tx, 'profiles', name);
    if (!existing) throw notFound(`unknown profile: ${name}`);
    const next: Spec = { ...body, id: existing.id };
    await replaceProfile(tx, next);
    return next;
  });
  await deps.broadcaster.send((r) => r.putProfile(tenantId, spec as ProfileSpec));
  return withPlacement(deps, spec);
}

export async function deleteProfile(deps: ProfileDeps, tenantId: string, name: string): Promise<void> {
  const deleted = await withTenant(deps.db, tenantId, (tx) => deleteSpec(tx, 'profiles', name));
  if (!deleted) throw notFound(`unknown profile: ${name}`);
  await deps.broadcaster.send((r) => r.deleteProfile(tenantId, name));
}
