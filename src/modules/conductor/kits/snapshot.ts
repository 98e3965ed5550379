import type { Tx } from '../../../db/index.ts';
import { badRequest } from '../../../shared/errors.ts';
import { listAutomations } from '../automations/automations.repo.ts';
import { getSpec } from '../profiles/profiles.repo.ts';
import { filesOf, skillsNamed } from '../skills/index.ts';
import type { CreateKit, KitManifest, SkillSnap } from './kit.schema.ts';
import { sanitizeAutomation, sanitizePool, sanitizeProfile, type PoolSnap } from './sanitize.ts';

/**
 * Takes a kit's snapshot inside the author's tenant transaction: the pool, agent (profile) or automation named by
 * `source`, with the profiles, skills (with their files) and automations it needs, each sanitized (sanitize.ts).
 * A pool or agent carries the live automations of its profiles, or only those `schedules` names.
 */
export type KitSource = CreateKit['source'];

export const sourceOf = (s: KitSource): { kind: KitManifest['kind']; name: string } =>
  s.pool !== undefined ? { kind: 'pool', name: s.pool } : s.agent !== undefined ? { kind: 'agent', name: s.agent } : { kind: 'automation', name: s.automation! };

export async function takeSnapshot(tx: Tx, source: KitSource, schedules: string[] | undefined): Promise<KitManifest> {
  const { kind, name } = sourceOf(source);
  const stripped: string[] = [];
  const live = (await listAutomations(tx, { includeDeleted: false }, { limit: undefined, offset: 0 })).items;
  let profileNames: string[];
  let pool: PoolSnap | null = null;
  let automations: typeof live = [];
  if (kind === 'pool') {
    const spec = await getSpec(tx, 'pools', name);
    if (!spec) throw badRequest(`source.pool: unknown pool: ${name}`);
    pool = sanitizePool(spec);
    profileNames = pool.members.map((m) => m.profile);
  } else if (kind === 'agent') {
    profileNames = [name];
  } else {
    const automation = live.find((a) => a.name === name);
    if (!automation) throw badRequest(`source.automation: unknown automation: ${name}`);
    automations = [automation];
    profileNames = [automation.profile];
  }
  const profiles = [];
  for (const p of [...new Set(profileNames)]) {
    const spec = await getSpec(tx, 'profiles', p);
    if (!spec) throw badRequest(kind === 'agent' ? `source.agent: unknown profile: ${p}` : `the ${kind} needs profile ${p}, which does not exist`);
    profiles.push(sanitizeProfile(spec, stripped) as KitManifest['profiles'][number]);
  }
  if (kind !== 'automation') {
    const mine = live.filter((a) => profileNames.includes(a.profile));
    if (schedules) {
      const unknown = schedules.filter((s) => !mine.some((a) => a.name === s));
      if (unknown.length) throw badRequest(`schedules: no automation of the ${kind}'s profiles is named ${unknown.join(', ')}`);
      automations = mine.filter((a) => schedules.includes(a.name));
    } else automations = mine;
  }
  const skillNames = [...new Set(profiles.flatMap((p) => (p.skills as string[] | undefined) ?? []))];
  const [skills, files] = [await skillsNamed(tx, skillNames), await filesOf(tx, skillNames)];
  const missing = skillNames.filter((s) => !skills.some((k) => k.name === s));
  if (missing.length) throw badRequest(`the ${kind} needs skills that are not in the catalog: ${missing.join(', ')}`);
  const skillSnaps: SkillSnap[] = skills.map((s) => ({
    name: s.name,
    description: s.description,
    body: s.body,
    license: s.license,
    compatibility: s.compatibility,
    allowedTools: s.allowedTools,
    metadata: s.metadata,
    requiresSandbox: s.requiresSandbox,
    totalBytes: s.totalBytes,
    resources: s.resources,
    files: (files.get(s.name) ?? []).map((f) => ({ path: f.path, content: Buffer.from(f.content).toString('base64'), executable: f.executable })),
  }));
  return {
    kind,
    root: name,
    profiles,
    pool,
    skills: skillSnaps.sort((a, b) => a.name.localeCompare(b.name)),
    automations: automations.map(sanitizeAutomation).sort((a, b) => a.name.localeCompare(b.name)),
    stripped,
  };
}

/** A manifest as readers see it: no file bytes (the resources list says what ships). */
export function readable(m: KitManifest): Omit<KitManifest, 'skills'> & { skills: Array<Omit<SkillSnap, 'files'>> } {
  return { ...m, skills: m.skills.map(({ files: _files, ...s }) => s) };
}
