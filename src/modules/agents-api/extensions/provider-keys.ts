import { withTenant } from '../../../db/index.ts';
import type { ResourceDeps } from '../deps.ts';
import { deleteProviderKeyRow, providerKeyRows, sealedProviderKey, upsertProviderKey } from './provider-keys.repo.ts';

/**
 * A tenant's own provider keys (`PUT /api/providers/{provider}/key`), stored sealed; only a hint (last four
 * characters) is ever shown. `providerKey` is what runs use: the decrypted key, or undefined when none is set.
 */
const aad = (tenantId: string, provider: string) => `provider_keys:${tenantId}:${provider}`;

export interface ProviderKeyMeta {
  keyHint: string;
  updatedAt: string;
}

export async function providerKey(deps: ResourceDeps, tenantId: string, provider: string): Promise<string | undefined> {
  const row = await withTenant(deps.db, tenantId, (tx) => sealedProviderKey(tx, provider));
  return row ? deps.box.open(row.sealed, aad(tenantId, provider)) : undefined;
}

export async function providerKeyMeta(deps: ResourceDeps, tenantId: string): Promise<Map<string, ProviderKeyMeta>> {
  const rows = await withTenant(deps.db, tenantId, (tx) => providerKeyRows(tx));
  return new Map(rows.map((r) => [r.provider, { keyHint: r.key_hint, updatedAt: new Date(r.updated_at).toISOString() }]));
}

export async function setProviderKey(deps: ResourceDeps, tenantId: string, provider: string, key: string): Promise<void> {
  const sealed = deps.box.seal(key, aad(tenantId, provider));
  const keyHint = `…${key.slice(-4)}`;
  await withTenant(deps.db, tenantId, (tx) => upsertProviderKey(tx, { tenantId, provider, sealed, keyHint }));
}

export async function deleteProviderKey(deps: ResourceDeps, tenantId: string, provider: string): Promise<void> {
  await withTenant(deps.db, tenantId, (tx) => deleteProviderKeyRow(tx, provider));
}
