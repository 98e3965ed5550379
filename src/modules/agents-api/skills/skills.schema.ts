import * as v from 'valibot';
import { cursorPageOf, deletedOf, Timestamp, type Describes } from '../wire.schema.ts';
import type { Skill, SkillVersion } from './skills.service.ts';

/** Skills and their versions (spec §2.11): a skill's name and description are those of its default version. */
export const SkillObject = v.object({
  id: v.string(),
  object: v.literal('skill'),
  created_at: Timestamp,
  default_version: v.string(),
  description: v.string(),
  latest_version: v.string(),
  name: v.string(),
});
export const SkillVersionObject = v.object({
  id: v.string(),
  object: v.literal('skill.version'),
  created_at: Timestamp,
  description: v.string(),
  name: v.string(),
  skill_id: v.string(),
  version: v.string(),
});
export const SkillPage = cursorPageOf(SkillObject);
export const SkillVersionPage = cursorPageOf(SkillVersionObject);
export const SkillDeleted = deletedOf('skill.deleted');
export const SkillVersionDeleted = v.object({ ...deletedOf('skill.version.deleted').entries, version: v.string() });

export type CheckedSkill = Describes<typeof SkillObject, Skill>;
export type CheckedSkillVersion = Describes<typeof SkillVersionObject, SkillVersion>;
