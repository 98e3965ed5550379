import type { RawBuilder } from 'kysely';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import type { Tx } from '../../../db/index.ts';

/** SQL of `provider_keys` (sealed keys; a hint of the last four characters). */
export interface SealedKey {
  provider: string;
  sealed: string;
}

export function sealedProviderKey(tx: Tx, provider: string) {
  return tx.selectFrom('provider_keys').select('sealed').where('provider', '=', provider).executeTakeFirst();
}

/**
 * Every sealed key of the tenant in scope, as a JSON array column of another statement: a run reads them with its
 * profile (runs.repo.ts), so a run costs no round trip more for them. A tenant holds at most one per provider.
 */
export function sealedKeysColumn(tx: Tx): RawBuilder<SealedKey[]> {
  return jsonArrayFrom(tx.selectFrom('provider_keys').select(['provider', 'sealed']));
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
