/** Pools (variant A) and pods (variant B): named groups of profiles sharing a filesystem area, broadcast like profiles. */
export { poolsFeature } from './pools.feature.ts';
