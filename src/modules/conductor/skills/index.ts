/** The skill catalog: `/api/skills` routes (with staged import), platform seeding and the resolver the run dispatcher uses. */
export { skillsFeature } from './skills.feature.ts';
export { skillRoutes } from './skills.routes.ts';
export { resolveSkills } from './resolve.ts';
export { SkillBody, type Skill } from './skill.schema.ts';
export { readPackage, type PackageEntry, type SkillPackage } from './skill-package.ts';
export { loadPlatformSkills, seedPlatformSkills, folderEntries, PLATFORM_SKILLS_DIR } from './platform.ts';
export { skillsNamed, filesOf, insertSkillRow, knownSkillNames, type SkillFile, type NewSkill } from './skills.repo.ts';
