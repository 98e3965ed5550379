import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { withTenant } from '../../../db/index.ts';
import type { ProfileSpec } from '../../../contracts/runner.client.ts';
import { permissionsProblem } from '../../../contracts/permissions.ts';
import { badRequest, conflict, notFound } from '../../../shared/errors.ts';
import { AGENT_SESSION_PROFILE_PREFIX, prefixedId } from '../../../shared/ids.ts';
import type { Broadcaster } from '../runners/broadcast.ts';
import type { Fleet } from '../runners/fleet.ts';
import type { Page } from '../../crud/index.ts';
import type { ProfileBody } from './profile.schema.ts';
import { deleteSpec, getPinnedSpec, getSpec, insertSpec, listSpecs, replaceProfile, setPinned, type Spec } from './profiles.repo.ts';
import { workerPlacement } from './placement.ts';
import { assertCommandSandbox } from '../runners/sandbox-check.ts';
import { knownSkillNames } from '../skills/skills.repo.ts';
import { priceTokens } from '../billing/model-prices.ts';
import { listHistory, type HistoryEntry } from './profile-history.repo.ts';
import { profileUsage } from './profile-usage.repo.ts';
import type { PrivateAddresses } from '../../../shared/egress/index.ts';
import { assertStoresExist } from '../memory/index.ts';
import type { SandboxLimitsService } from '../sandbox-limits/index.ts';

/** Profiles: stored per tenant, validated against the skill catalog (variant A), broadcast to every runner. */
export interface ProfileDeps {
  db: Kysely<DB>;
  fleet: Fleet;
  broadcaster: Broadcaster;
  /** SVC_PRIVATE_ADDRESSES (runs/mcp-address.ts): MCP server URLs on internal addresses are refused with `deny`; absent: allow. */
  privateAddresses?: PrivateAddresses;
  /** A profile's `limits` above the operator's or the tenant's ceiling is a 400 naming the key and the ceiling. */
  sandboxLimits: Pick<SandboxLimitsService, 'assertWithin'>;
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

/** Pinned profiles first, then by name; each with `pinned`. */
export async function listProfiles(deps: ProfileDeps, tenantId: string, page: Page) {
  const res = await withTenant(deps.db, tenantId, (tx) => listSpecs(tx, 'profiles', page, { pinned: true }));
  return { items: res.items.map((p) => withPlacement(deps, p)), total: res.total };
}

export async function getProfile(deps: ProfileDeps, tenantId: string, name: string): Promise<Spec> {
  const p = await withTenant(deps.db, tenantId, (tx) => getPinnedSpec(tx, 'profiles', name));
  if (!p) throw notFound(`unknown profile: ${name}`);
  return withPlacement(deps, p);
}

const runnerInfos = (deps: ProfileDeps) => deps.fleet.members().map((m) => m.info);

/** Who made a change, as history records it: the API key's id, else the credential's subject, else its kind. */
export function actorOf(p: { keyId: string | null; subject: string | null; authKind: string }): string {
  return p.keyId ? `key:${p.keyId}` : (p.subject ?? p.authKind);
}

export async function createProfile(deps: ProfileDeps, tenantId: string, body: ProfileBody, actor: string | null = null): Promise<Spec> {
  if (body.name.startsWith(AGENT_SESSION_PROFILE_PREFIX)) throw badRequest(`name: the prefix ${AGENT_SESSION_PROFILE_PREFIX} is reserved for the profiles of /v1 agent sessions`);
  assertCommandSandbox(runnerInfos(deps), body.tools);
  assertPermissions(body);
  await deps.sandboxLimits.assertWithin(tenantId, body.limits, 'limits');
  await checkSkills(deps.db, tenantId, body.skills);
  await assertStoresExist(deps.db, tenantId, body.memoryStores);
  const spec: Spec = { ...body, id: body.id ?? prefixedId('prof') };
  const created = await withTenant(deps.db, tenantId, (tx) => insertSpec(tx, 'profiles', tenantId, spec, actor));
  if (!created) throw conflict(`profile ${body.name} already exists`);
  await deps.broadcaster.send((r) => r.putProfile(tenantId, spec as ProfileSpec));
  return withPlacement(deps, { ...spec, pinned: false });
}

export async function replaceProfileByName(deps: ProfileDeps, tenantId: string, name: string, body: ProfileBody, actor: string | null = null): Promise<Spec> {
  if (body.name !== name) throw badRequest(`name: must equal the path name ${name} (profiles cannot be renamed)`);
  assertCommandSandbox(runnerInfos(deps), body.tools);
  assertPermissions(body);
  await deps.sandboxLimits.assertWithin(tenantId, body.limits, 'limits');
  await checkSkills(deps.db, tenantId, body.skills);
  await assertStoresExist(deps.db, tenantId, body.memoryStores);
  return updateProfile(deps, tenantId, name, actor, (existing) => ({ ...body, id: existing.id }));
}

/** A profile's `permissions` the runner's gate can enforce, or 400 naming the selector (contracts/permissions.ts). */
function assertPermissions(body: ProfileBody): void {
  const problem = permissionsProblem(body.permissions, body);
  if (problem) throw badRequest(problem);
}

/** Read (locked), change, record the version, broadcast: every change of a stored profile goes through here. */
async function updateProfile(deps: ProfileDeps, tenantId: string, name: string, actor: string | null, change: (existing: Spec) => Spec): Promise<Spec> {
  const spec = await withTenant(deps.db, tenantId, async (tx) => {
    const existing = await getPinnedSpec(tx, 'profiles', name, true);
    if (!existing) throw notFound(`unknown profile: ${name}`);
    const { pinned, ...before } = existing;
    const next = change(before as Spec);
    await replaceProfile(tx, tenantId, before as Spec, next, actor);
    return { next, pinned };
  });
  await deps.broadcaster.send((r) => r.putProfile(tenantId, spec.next as ProfileSpec));
  return withPlacement(deps, { ...spec.next, pinned: spec.pinned });
}

/** Attaches a skill of the catalog (400 for an unknown one); attaching one already there changes nothing. */
export async function attachSkill(deps: ProfileDeps, tenantId: string, name: string, skill: string, actor: string | null): Promise<Spec> {
  await checkSkills(deps.db, tenantId, [skill]);
  return updateProfile(deps, tenantId, name, actor, (p) => {
    const skills = (p.skills as string[] | undefined) ?? [];
    return skills.includes(skill) ? p : { ...p, skills: [...skills, skill] };
  });
}

/** Detaches a skill; 404 when the profile does not have it. */
export async function detachSkill(deps: ProfileDeps, tenantId: string, name: string, skill: string, actor: string | null): Promise<Spec> {
  return updateProfile(deps, tenantId, name, actor, (p) => {
    const skills = (p.skills as string[] | undefined) ?? [];
    if (!skills.includes(skill)) throw notFound(`profile ${name} has no skill ${skill}`);
    return { ...p, skills: skills.filter((s) => s !== skill) };
  });
}

export async function pinProfile(deps: ProfileDeps, tenantId: string, name: string, pinned: boolean): Promise<Spec> {
  const p = await withTenant(deps.db, tenantId, async (tx) => {
    if (!(await setPinned(tx, 'profiles', name, pinned))) throw notFound(`unknown profile: ${name}`);
    return getPinnedSpec(tx, 'profiles', name);
  });
  return withPlacement(deps, p!);
}

export async function profileHistory(deps: ProfileDeps, tenantId: string, name: string, page: Page): Promise<{ items: HistoryEntry[]; total: number }> {
  return withTenant(deps.db, tenantId, async (tx) => {
    if (!(await getSpec(tx, 'profiles', name))) throw notFound(`unknown profile: ${name}`);
    return listHistory(tx, name, page);
  });
}

/** `?window=` of the usage route: a span back from now, or `all`. */
export const USAGE_WINDOWS: Record<string, number | null> = { '1h': 3_600_000, '24h': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000, '90d': 90 * 86_400_000, all: null };

/** The profile's runs in the window: how many, how many failed, their tokens and their cost (priced like billing). */
export async function profileUsageTotals(deps: ProfileDeps, tenantId: string, name: string, window = '30d', now = new Date()) {
  if (!(window in USAGE_WINDOWS)) throw badRequest(`window: one of ${Object.keys(USAGE_WINDOWS).join(', ')}`);
  const span = USAGE_WINDOWS[window];
  const since = span === null ? undefined : new Date(now.getTime() - span);
  const groups = await withTenant(deps.db, tenantId, async (tx) => {
    if (!(await getSpec(tx, 'profiles', name))) throw notFound(`unknown profile: ${name}`);
    return profileUsage(tx, name, since);
  });
  const byModel = groups.map((g) => {
    const price = priceTokens(g.model, g.runtime, { input: g.input, output: g.output, cacheRead: g.cacheRead, cacheWrite: g.cacheWrite });
    return {
      model: g.model,
      runs: g.runs,
      failedRuns: g.failed,
      tokens: { input: g.input, output: g.output, cacheRead: g.cacheRead, cacheWrite: g.cacheWrite, total: g.input + g.output + g.cacheRead + g.cacheWrite },
      costMicroUsd: price.costMicroUsd,
      priced: price.priced,
    };
  });
  const sum = (f: (m: (typeof byModel)[number]) => number) => byModel.reduce((a, m) => a + f(m), 0);
  const cost = sum((m) => m.costMicroUsd);
  return {
    profile: name,
    window,
    since: since?.toISOString() ?? null,
    until: now.toISOString(),
    runs: sum((m) => m.runs),
    failedRuns: sum((m) => m.failedRuns),
    tokens: {
      input: sum((m) => m.tokens.input),
      output: sum((m) => m.tokens.output),
      cacheRead: sum((m) => m.tokens.cacheRead),
      cacheWrite: sum((m) => m.tokens.cacheWrite),
      total: sum((m) => m.tokens.total),
    },
    costMicroUsd: cost,
    costUsd: cost / 1e6,
    byModel,
  };
}

/**
 * The canonical helper profile (seed 000: "seed the helper profile"): a general assistant with the safe toolkit, on the
 * built-in demo model so it runs on a fresh install without any provider key (PUT it with a real model after).
 * Idempotent: an existing `helper` is left as it is.
 */
export const HELPER_PROFILE = {
  name: 'helper',
  runtime: 'general',
  model: 'demo:echo',
  systemPrompt:
    'You are the svc helper. You help the people of this organization use svc: explain profiles, pools, runs, automations and skills, ' +
    'suggest a configuration for what they want to do, and read or write files in your workspace when asked. Be brief and concrete.',
  tools: ['@default'],
} as const satisfies ProfileBody;

export async function seedHelper(deps: ProfileDeps, tenantId: string, actor: string | null): Promise<{ profileName: string; created: boolean }> {
  const spec: Spec = { ...HELPER_PROFILE, tools: [...HELPER_PROFILE.tools], id: prefixedId('prof') };
  const created = await withTenant(deps.db, tenantId, (tx) => insertSpec(tx, 'profiles', tenantId, spec, actor));
  if (created) await deps.broadcaster.send((r) => r.putProfile(tenantId, spec as ProfileSpec));
  return { profileName: HELPER_PROFILE.name, created };
}

export async function deleteProfile(deps: ProfileDeps, tenantId: string, name: string): Promise<void> {
  const deleted = await withTenant(deps.db, tenantId, (tx) => deleteSpec(tx, 'profiles', name));
  if (!deleted) throw notFound(`unknown profile: ${name}`);
  await deps.broadcaster.send((r) => r.deleteProfile(tenantId, name));
}
