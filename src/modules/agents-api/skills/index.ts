/** `/v1/skills`: versioned skill archives. */
export { skillsFeature } from './skills.feature.ts';
export { skillNameProblem } from './skill-archive.ts';
