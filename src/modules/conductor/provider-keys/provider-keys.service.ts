import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { withTenant } from '../../../db/index.ts';
import { AppError } from '../../../shared/errors.ts';
import type { SecretBox } from '../../../shared/secret-box.ts';
import { deleteProviderKeyRow, providerKeyRows, sealedProviderKey, upsertProviderKey, type SealedKey } from './provider-keys.repo.ts';

/**
 * A tenant's own provider keys (`PUT /api/providers/{provider}/key`, routes in the agents API's extensions), stored
 * sealed; only a hint (last four characters) is ever shown. Every run of the tenant on that provider calls its model
 * with this key (run-key.ts); `get` is what the /v1 agents API resolves its `<provider>/<id>` models with.
 */
export interface ProviderKeyMeta {
  keyHint: string;
  updatedAt: string;
}

export interface ProviderKeys {
  /** The decrypted key, or undefined when the tenant set none. */
  get(tenantId: string, provider: string): Promise<string | undefined>;
  meta(tenantId: string): Promise<Map<string, ProviderKeyMeta>>;
  set(tenantId: string, provider: string, key: string): Promise<void>;
  delete(tenantId: string, provider: string): Promise<void>;
  /** Opens a sealed key read by another statement (a run's profile lookup reads them with the profile). */
  open(tenantId: string, row: SealedKey): string;
}

const aad = (tenantId: string, provider: string) => `provider_keys:${tenantId}:${provider}`;

/** Built once by the conductor's core; the run service and the agents API's `/api/providers` routes share it. */
export function createProviderKeys(deps: { db: Kysely<DB>; box: SecretBox }): ProviderKeys {
  const open = (tenantId: string, row: SealedKey): string => {
    try {
      return deps.box.open(row.sealed, aad(tenantId, row.provider));
    } catch {
      // never the operator's key instead: the tenant chose to pay with its own, so its runs stop until it is readable
      throw new AppError(409, `this organisation's ${row.provider} key cannot be read (the server's SVC_SECRETS_KEY changed since it was set): set it again with PUT /api/providers/${row.provider}/key`);
    }
  };
  return {
    async get(tenantId, provider) {
      const row = await withTenant(deps.db, tenantId, (tx) => sealedProviderKey(tx, provider));
      return row ? open(tenantId, { provider, sealed: row.sealed }) : undefined;
    },
    async meta(tenantId) {
      const rows = await withTenant(deps.db, tenantId, (tx) => providerKeyRows(tx));
      return new Map(rows.map((r) => [r.provider, { keyHint: r.key_hint, updatedAt: new Date(r.updated_at).toISOString() }]));
    },
    async set(tenantId, provider, key) {
      const sealed = deps.box.seal(key, aad(tenantId, provider));
      await withTenant(deps.db, tenantId, (tx) => upsertProviderKey(tx, { tenantId, provider, sealed, keyHint: `…${key.slice(-4)}` }));
    },
    async delete(tenantId, provider) {
      await withTenant(deps.db, tenantId, (tx) => deleteProviderKeyRow(tx, provider));
    },
    open,
  };
}
