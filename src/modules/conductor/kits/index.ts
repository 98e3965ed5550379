/** Kits (templates in the API): sanitized, shareable snapshots of pools, agents and automations, and their copies. */
export { kitsFeature } from './kits.feature.ts';
