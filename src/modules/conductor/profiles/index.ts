/** Profiles: saved agent configurations, validated against the skill catalog and broadcast to every runner. */
export { profilesFeature } from './profiles.feature.ts';
