/** Tenants' own provider keys: the store behind `/api/providers/{provider}/key` and the rule of whose key a run uses. */
export { createProviderKeys, type ProviderKeyMeta, type ProviderKeys } from './provider-keys.service.ts';
export { sealedKeysColumn, type SealedKey } from './provider-keys.repo.ts';
export { runKey, runProvider, type RunKey } from './run-key.ts';
