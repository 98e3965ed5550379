import type { Tx } from '../../../db/index.ts';

/** SQL of `provider_keys` (sealed keys; a hint of the last four characters). */
export function sealedProviderKey(tx: Tx, provider: string) {
  return tx.selectFrom('provider_keys').select('sealed').where('provider', '=', provider).executeTakeFirst();
}

export function providerKeyRows(tx: Tx) {
  return tx.selectFrom('provider_keys').select(['provider', 'key_hint', 'updated_at']).execute();
}

export async function upsertProviderKey(tx: Tx, k: { tenantId: string; provider: string; sealed: string; keyHint: string }): Promise<void> {
  await tx
    .insertInto('provider_keys')
    .values({ tenant_id: k.tenantId, provider: k.provider, sealed: k.sealed, key_hint: k.keyHint })
    .onConflict((oc) => oc.columns(['tenant_id', 'provider']).doUpdateSet({ sealed: k.sealed, key_hint: k.keyHint, updated_at: new Date() }))
    .execute();
}

export async function deleteProviderKeyRow(tx: Tx, provider: string): Promise<void> {
  await tx.deleteFrom('provider_keys').where('provider', '=', provider).execute();
}
