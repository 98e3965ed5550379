/** `/v1/skills`: versioned skill archives. */
export { skillsFeature } from './skills.feature.ts';
