import type { PoolSpec, ProfileSpec } from '../../../contracts/runner.client.ts';
import type { Tx } from '../../../db/index.ts';
import { AppError } from '../../../shared/errors.ts';
import { parseWith } from '../../../shared/http.ts';
import { prefixedId } from '../../../shared/ids.ts';
import { insertAutomation, listAutomations, updateAutomation } from '../automations/automations.repo.ts';
import { ProfileBody } from '../profiles/profile.schema.ts';
import { getSpec, insertSpec, type Spec } from '../profiles/profiles.repo.ts';
import { PoolBody } from '../pools/pools.routes.ts';
import { insertSkillRow, skillsNamed } from '../skills/index.ts';
import { pathProblem } from '../skills/skill-package.ts';
import type { KitManifest, SkillSnap } from './kit.schema.ts';
import { canonical, sanitizeAutomation, sanitizePool, sanitizeProfile, type AutomationSnap } from './sanitize.ts';

/**
 * Using a kit in the caller's tenant. The copy plan says, per asset, whether the tenant lacks it (`new`), has it under
 * that name with other content (`changed`: the copy goes to the suggested free name) or has it as the kit has it
 * (`unchanged`: reused). Copy is idempotent on the root's target name (the pool, agent or automation): when that
 * name is taken nothing is written and the answer is `already_exists`. Everything is written in one transaction;
 * automations arrive stopped; a skill that cannot be installed fails the whole copy with 424.
 */
export type AssetKind = 'skill' | 'profile' | 'pool' | 'automation';
export type AssetStatus = 'new' | 'changed' | 'unchanged';

export interface PlanItem {
  kind: AssetKind;
  name: string;
  status: AssetStatus;
  targetName: string;
}

export interface CopyPlan {
  targetName: string;
  /** The root's target name is taken: a copy would answer `already_exists`. */
  rootExists: boolean;
  assets: PlanItem[];
}

const MAX_CANDIDATES = 50;
const candidate = (name: string, i: number) => (i === 0 ? name : `${name}-${i + 1}`);

/** The first name from `desired` on that is free or holds exactly `want(name)`. */
async function place(desired: string, want: (name: string) => string, have: (name: string) => Promise<string | undefined>): Promise<{ status: AssetStatus; targetName: string }> {
  for (let i = 0; i < MAX_CANDIDATES; i++) {
    const name = candidate(desired, i);
    const existing = await have(name);
    if (existing === undefined) return { status: i === 0 ? 'new' : 'changed', targetName: name };
    if (existing === want(name)) return { status: 'unchanged', targetName: name };
  }
  throw new AppError(409, `no free name for ${desired} (tried ${MAX_CANDIDATES})`);
}

const skillPrint = (s: { body: string; description: string; resources: Array<{ path: string; sha256: string; executable?: boolean }> }) =>
  canonical([s.body, s.description, s.resources.map((r) => [r.path, r.sha256, r.executable ?? false]).sort()]);

interface Resolved {
  plan: CopyPlan;
  skills: Map<string, string>;
  profiles: Map<string, Record<string, unknown> & { name: string }>;
  pool: (PoolSpec & { name: string }) | undefined;
  automations: Map<string, AutomationSnap>;
}

async function resolve(tx: Tx, m: KitManifest, targetName: string | undefined): Promise<Resolved> {
  const assets: PlanItem[] = [];
  const root = targetName ?? m.root;
  const skills = new Map<string, string>();
  for (const s of m.skills) {
    const r = await place(s.name, () => skillPrint(s), async (n) => {
      const [have] = await skillsNamed(tx, [n]);
      return have ? skillPrint(have) : undefined;
    });
    skills.set(s.name, r.targetName);
    assets.push({ kind: 'skill', name: s.name, ...r });
  }
  const profileNames = new Map<string, string>();
  const profiles = new Map<string, Record<string, unknown> & { name: string }>();
  for (const p of m.profiles) {
    const want = (name: string) => ({ ...p, name, ...(Array.isArray(p.skills) ? { skills: (p.skills as string[]).map((s) => skills.get(s) ?? s) } : {}) });
    const desired = m.kind === 'agent' && p.name === m.root ? root : p.name;
    const r = await place(desired, (n) => canonical(want(n)), async (n) => {
      const have = await getSpec(tx, 'profiles', n);
      return have ? canonical(sanitizeProfile(have, [])) : undefined;
    });
    profileNames.set(p.name, r.targetName);
    profiles.set(p.name, want(r.targetName));
    assets.push({ kind: 'profile', name: p.name, ...r });
  }
  let pool: Resolved['pool'];
  if (m.pool) {
    const snap = m.pool;
    const want = (name: string) => ({ ...snap, name, members: snap.members.map((mem) => ({ ...mem, profile: profileNames.get(mem.profile) ?? mem.profile })) });
    const r = await place(root, (n) => canonical(want(n)), async (n) => {
      const have = await getSpec(tx, 'pools', n);
      return have ? canonical(sanitizePool(have)) : undefined;
    });
    pool = want(r.targetName);
    assets.push({ kind: 'pool', name: snap.name, ...r });
  }
  const live = (await listAutomations(tx, { includeDeleted: false }, { limit: undefined, offset: 0 })).items;
  const automations = new Map<string, AutomationSnap>();
  for (const a of m.automations) {
    const want = (name: string) => ({ ...a, name, profile: profileNames.get(a.profile) ?? a.profile });
    const desired = m.kind === 'automation' && a.name === m.root ? root : a.name;
    const r = await place(desired, (n) => canonical(want(n)), async (n) => {
      const have = live.find((x) => x.name === n);
      return have ? canonical(sanitizeAutomation(have)) : undefined;
    });
    automations.set(a.name, want(r.targetName));
    assets.push({ kind: 'automation', name: a.name, ...r });
  }
  const rootKind: AssetKind = m.kind === 'agent' ? 'profile' : m.kind;
  const rootItem = assets.find((i) => i.kind === rootKind && i.name === m.root)!;
  return { plan: { targetName: root, rootExists: rootItem.targetName !== root || rootItem.status !== 'new', assets }, skills, profiles, pool, automations };
}

export async function copyPlan(tx: Tx, m: KitManifest, targetName?: string): Promise<CopyPlan> {
  return (await resolve(tx, m, targetName)).plan;
}

export type CopyResult =
  | { copied: false; reason: 'already_exists'; targetName: string; assets: PlanItem[] }
  | { copied: true; targetName: string; created: Array<{ kind: AssetKind; name: string }>; assets: PlanItem[]; profiles: ProfileSpec[]; pool: PoolSpec | undefined };

async function installSkill(tx: Tx, tenantId: string, s: SkillSnap, name: string): Promise<void> {
  const fail = (why: string) => new AppError(424, `kit skill ${s.name} failed to install: ${why}`);
  const bad = s.files.map((f) => pathProblem(f.path)).find(Boolean);
  if (bad) throw fail(bad.message);
  const files = s.files.map((f) => ({ path: f.path, content: new Uint8Array(Buffer.from(f.content, 'base64')), executable: f.executable }));
  const { files: _f, ...meta } = s;
  let row;
  try {
    row = await insertSkillRow(tx, tenantId, { ...meta, name, source: 'imported' }, files);
  } catch (err) {
    throw fail((err as Error).message);
  }
  if (!row) throw fail(`a skill named ${name} appeared meanwhile`);
}

/** Writes the kit's new and changed assets into the tenant (inside `tx`); the caller broadcasts profiles and pool. */
export async function copyKit(tx: Tx, tenantId: string, m: KitManifest, targetName?: string): Promise<CopyResult> {
  const r = await resolve(tx, m, targetName);
  const { plan } = r;
  if (plan.rootExists) return { copied: false, reason: 'already_exists', targetName: plan.targetName, assets: plan.assets };
  const created: Array<{ kind: AssetKind; name: string }> = [];
  const todo = (kind: AssetKind, name: string) => plan.assets.find((a) => a.kind === kind && a.name === name && a.status !== 'unchanged');
  for (const s of m.skills) {
    const item = todo('skill', s.name);
    if (!item) continue;
    await installSkill(tx, tenantId, s, item.targetName);
    created.push({ kind: 'skill', name: item.targetName });
  }
  const profiles: ProfileSpec[] = [];
  for (const p of m.profiles) {
    const item = todo('profile', p.name);
    if (!item) continue;
    const spec: Spec = { ...parseWith(ProfileBody, r.profiles.get(p.name)), id: prefixedId('prof') };
    if (!(await insertSpec(tx, 'profiles', tenantId, spec))) throw new AppError(409, `profile ${spec.name} appeared meanwhile; copy again`);
    profiles.push(spec as ProfileSpec);
    created.push({ kind: 'profile', name: spec.name });
  }
  let pool: PoolSpec | undefined;
  if (m.pool && r.pool && todo('pool', m.pool.name)) {
    const spec: Spec = { ...parseWith(PoolBody, r.pool), id: prefixedId('pool') };
    if (!(await insertSpec(tx, 'pools', tenantId, spec))) throw new AppError(409, `pool ${spec.name} appeared meanwhile; copy again`);
    pool = spec as PoolSpec;
    created.push({ kind: 'pool', name: spec.name });
  }
  for (const a of m.automations) {
    const item = todo('automation', a.name);
    if (!item) continue;
    const snap = r.automations.get(a.name)!;
    const row = await insertAutomation(tx, { id: prefixedId('aut'), tenantId, ...snap, startAt: null, endAt: null, nextRunAt: null });
    if (!row) throw new AppError(409, `automation ${snap.name} appeared meanwhile; copy again`);
    await updateAutomation(tx, row.id, { status: 'stopped', next_run_at: null });
    created.push({ kind: 'automation', name: snap.name });
  }
  return { copied: true, targetName: plan.targetName, created, assets: plan.assets, profiles, pool };
}
