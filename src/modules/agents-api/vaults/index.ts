/** `/v1/vaults`: credential vaults, sealed with the secrets key. */
export { vaultsFeature } from './vaults.feature.ts';
