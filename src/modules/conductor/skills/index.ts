/** The skill catalog: `/api/skills` routes and the resolver the run dispatcher uses. */
export { skillsFeature } from './skills.feature.ts';
export { skillRoutes } from './skills.routes.ts';
export { resolveSkills } from './resolve.ts';
export { SkillBody, type Skill } from './skill.schema.ts';
