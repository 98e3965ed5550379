import type { Tx } from '../../../db/index.ts';
import { jsonb } from '../../../db/json.ts';
import type { Page } from '../../crud/index.ts';
import type { Skill, SkillBody, SkillSource, StoredResource } from './skill.schema.ts';

/**
 * SQL for the skill catalog (table `skills`, sql/0002 and 0016; files in `skill_files`, platform tombstones in
 * `skill_tombstones`). Every call runs inside a tenant-scoped transaction, but `liveTenantIds` (an operator one).
 */
type Row = {
  name: string;
  description: string;
  body: string;
  resources: unknown;
  source: SkillSource;
  license: string | null;
  compatibility: string | null;
  allowed_tools: unknown;
  metadata: unknown;
  requires_sandbox: boolean;
  total_bytes: string | number;
  created_at: Date;
};

const toSkill = (r: Row): Skill => ({
  name: r.name,
  description: r.description,
  body: r.body,
  resources: r.resources as StoredResource[],
  source: r.source,
  license: r.license,
  compatibility: r.compatibility,
  allowedTools: r.allowed_tools as string[],
  metadata: r.metadata as Record<string, unknown>,
  requiresSandbox: r.requires_sandbox,
  totalBytes: Number(r.total_bytes),
  createdAt: new Date(r.created_at).toISOString(),
});

const COLUMNS = ['name', 'description', 'body', 'resources', 'source', 'license', 'compatibility', 'allowed_tools', 'metadata', 'requires_sandbox', 'total_bytes', 'created_at'] as const;

/** A whole skill row to write: a JSON skill (`user`) or a package (`imported`, `platform`). */
export interface NewSkill {
  name: string;
  description: string;
  body: string;
  resources: StoredResource[];
  source: SkillSource;
  license?: string | null;
  compatibility?: string | null;
  allowedTools?: string[];
  metadata?: Record<string, unknown>;
  requiresSandbox?: boolean;
  totalBytes?: number;
}

export interface SkillFile {
  path: string;
  content: Uint8Array;
  executable: boolean;
}

const values = (tenantId: string, s: NewSkill) => ({
  tenant_id: tenantId,
  name: s.name,
  description: s.description,
  body: s.body,
  resources: jsonb(s.resources),
  source: s.source,
  license: s.license ?? null,
  compatibility: s.compatibility ?? null,
  allowed_tools: jsonb(s.allowedTools ?? []),
  metadata: jsonb(s.metadata ?? {}),
  requires_sandbox: s.requiresSandbox ?? false,
  total_bytes: s.totalBytes ?? 0,
});

/** Inserts a skill and its files; undefined when the name is taken (nothing written). */
export async function insertSkillRow(tx: Tx, tenantId: string, s: NewSkill, files: readonly SkillFile[] = []): Promise<Skill | undefined> {
  const row = await tx
    .insertInto('skills')
    .values(values(tenantId, s))
    .onConflict((oc) => oc.columns(['tenant_id', 'name']).doNothing())
    .returning(COLUMNS)
    .executeTakeFirst();
  if (!row) return undefined;
  await insertFiles(tx, tenantId, s.name, files);
  return toSkill(row as Row);
}

/** `POST /api/skills`: a JSON skill (source `user`, manifest only). */
export function insertSkill(tx: Tx, tenantId: string, s: SkillBody): Promise<Skill | undefined> {
  return insertSkillRow(tx, tenantId, { ...s, source: 'user', totalBytes: s.resources.reduce((n, r) => n + r.size, 0) + Buffer.byteLength(s.body) });
}

async function insertFiles(tx: Tx, tenantId: string, skillName: string, files: readonly SkillFile[]): Promise<void> {
  for (let i = 0; i < files.length; i += 50) {
    const batch = files.slice(i, i + 50).map((f) => ({ tenant_id: tenantId, skill_name: skillName, path: f.path, content: f.content, executable: f.executable }));
    await tx.insertInto('skill_files').values(batch).execute();
  }
}

/** Replaces a platform skill in place (a newer copy shipped with the server); user and imported skills are left alone. */
export async function replacePlatformSkill(tx: Tx, tenantId: string, s: NewSkill, files: readonly SkillFile[]): Promise<boolean> {
  const { tenant_id: _t, name: _n, ...set } = values(tenantId, s);
  const row = await tx.updateTable('skills').set({ ...set, updated_at: new Date() }).where('name', '=', s.name).where('source', '=', 'platform').returning('name').executeTakeFirst();
  if (!row) return false;
  await tx.deleteFrom('skill_files').where('skill_name', '=', s.name).execute();
  await insertFiles(tx, tenantId, s.name, files);
  return true;
}

export async function listSkills(tx: Tx, page: Page): Promise<{ items: Skill[]; total: number }> {
  let q = tx.selectFrom('skills').select(COLUMNS).orderBy('name');
  if (page.limit !== undefined) q = q.limit(page.limit).offset(page.offset);
  const items = ((await q.execute()) as Row[]).map(toSkill);
  const total =
    page.limit === undefined ? items.length : Number((await tx.selectFrom('skills').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  return { items, total };
}

export async function skillsNamed(tx: Tx, names: readonly string[]): Promise<Skill[]> {
  if (names.length === 0) return [];
  return ((await tx.selectFrom('skills').select(COLUMNS).where('name', 'in', [...names]).execute()) as Row[]).map(toSkill);
}

/** The files of the named skills, by skill name (skills without files are absent). */
export async function filesOf(tx: Tx, names: readonly string[]): Promise<Map<string, SkillFile[]>> {
  const out = new Map<string, SkillFile[]>();
  if (names.length === 0) return out;
  const rows = await tx.selectFrom('skill_files').select(['skill_name', 'path', 'content', 'executable']).where('skill_name', 'in', [...names]).orderBy('path').execute();
  for (const r of rows) {
    const list = out.get(r.skill_name) ?? [];
    list.push({ path: r.path, content: r.content, executable: r.executable });
    out.set(r.skill_name, list);
  }
  return out;
}

/** Deletes a skill (its files go with it); a platform skill leaves a tombstone so the boot seeding skips it. */
export async function deleteSkill(tx: Tx, tenantId: string, name: string): Promise<boolean> {
  const row = await tx.deleteFrom('skills').where('name', '=', name).returning(['name', 'source']).executeTakeFirst();
  if (row?.source === 'platform') {
    await tx.insertInto('skill_tombstones').values({ tenant_id: tenantId, name }).onConflict((oc) => oc.columns(['tenant_id', 'name']).doNothing()).execute();
  }
  return row !== undefined;
}

export async function tombstoned(tx: Tx): Promise<Set<string>> {
  return new Set((await tx.selectFrom('skill_tombstones').select('name').execute()).map((r) => r.name));
}

/** Which of `names` the tenant's catalog holds (names only, no bodies). */
export async function knownSkillNames(tx: Tx, names: readonly string[]): Promise<Array<{ name: string }>> {
  if (names.length === 0) return [];
  return tx.selectFrom('skills').select('name').where('name', 'in', [...names]).execute();
}

/** The tenants platform skills are seeded into: every one not deleted (an operator transaction). */
export async function liveTenantIds(tx: Tx): Promise<string[]> {
  return (await tx.selectFrom('tenants').select('id').where('deleted_at', 'is', null).execute()).map((t) => t.id);
}

/** The live tenants (of `among`, when given) last seeded with other platform skills than `fingerprint` (an operator transaction). */
export async function tenantsToSeed(tx: Tx, fingerprint: string, among?: readonly string[]): Promise<string[]> {
  let q = tx.selectFrom('tenants').select('id').where('deleted_at', 'is', null).where('platform_skills', 'is distinct from', fingerprint);
  if (among) {
    if (among.length === 0) return [];
    q = q.where('id', 'in', [...among]);
  }
  return (await q.execute()).map((t) => t.id);
}

/** Records which platform skills the tenant now holds (inside its own transaction: the row is its own). */
export async function markSeeded(tx: Tx, tenantId: string, fingerprint: string): Promise<void> {
  await tx.updateTable('tenants').set({ platform_skills: fingerprint }).where('id', '=', tenantId).execute();
}
