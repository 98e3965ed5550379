/** The minimal dashboard the conductor serves itself (sign-in, CLI login approval pages). */
export { dashboardFeature } from './dashboard.feature.ts';
