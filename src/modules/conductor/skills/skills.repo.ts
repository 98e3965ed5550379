import type { Tx } from '../../../db/index.ts';
import { jsonb } from '../../../db/json.ts';
import type { Page } from '../../crud/index.ts';
import type { Skill, SkillBody, SkillResource } from './skill.schema.ts';

/** SQL for the skill catalog (table `skills`, sql/0002). Every call runs inside a tenant-scoped transaction. */
type Row = { name: string; description: string; body: string; resources: unknown; source: string; created_at: Date };

const toSkill = (r: Row): Skill => ({
  name: r.name,
  description: r.description,
  body: r.body,
  resources: r.resources as SkillResource[],
  source: r.source,
  createdAt: new Date(r.created_at).toISOString(),
});

const COLUMNS = ['name', 'description', 'body', 'resources', 'source', 'created_at'] as const;

/** Inserts; undefined when the name is taken. */
export async function insertSkill(tx: Tx, tenantId: string, s: SkillBody): Promise<Skill | undefined> {
  const row = await tx
    .insertInto('skills')
    .values({ tenant_id: tenantId, name: s.name, description: s.description, body: s.body, resources: jsonb(s.resources), source: 'user' })
    .onConflict((oc) => oc.columns(['tenant_id', 'name']).doNothing())
    .returning(COLUMNS)
    .executeTakeFirst();
  return row ? toSkill(row as Row) : undefined;
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

export async function deleteSkill(tx: Tx, name: string): Promise<boolean> {
  return (await tx.deleteFrom('skills').where('name', '=', name).returning('name').executeTakeFirst()) !== undefined;
}

/** Which of `names` the tenant's catalog holds (names only, no bodies). */
export async function knownSkillNames(tx: Tx, names: readonly string[]): Promise<Array<{ name: string }>> {
  if (names.length === 0) return [];
  return tx.selectFrom('skills').select('name').where('name', 'in', [...names]).execute();
}
