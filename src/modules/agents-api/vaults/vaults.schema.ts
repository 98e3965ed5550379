import * as v from 'valibot';
import { cursorPageOf, cursorQuery, deletedOf, StringMap, Timestamp, type Describes } from '../wire.schema.ts';
import type { Credential } from './credentials.service.ts';
import type { Vault } from './vaults.service.ts';

/** Vaults and their credentials (spec §2.10): a credential's `auth` never carries its secrets. */
export const VaultObject = v.object({ id: v.string(), object: v.literal('vault'), created_at: Timestamp, metadata: StringMap, name: v.nullable(v.string()) });
export const VaultPage = cursorPageOf(VaultObject);
export const VaultDeleted = deletedOf('vault.deleted');

const PublicAuth = v.variant('type', [
  v.object({
    type: v.literal('mcp_oauth'),
    mcp_server_url: v.string(),
    expires_at: v.nullable(v.pipe(v.string(), v.description('RFC 3339'))),
    refresh: v.nullable(
      v.object({
        client_id: v.string(),
        token_endpoint: v.string(),
        resource: v.nullable(v.string()),
        scope: v.nullable(v.string()),
        token_endpoint_auth: v.object({ type: v.picklist(['none', 'client_secret_basic', 'client_secret_post']) }),
      }),
    ),
  }),
  v.object({ type: v.literal('static_bearer'), mcp_server_url: v.string() }),
]);

export const CredentialObject = v.object({
  id: v.string(),
  object: v.literal('vault.credential'),
  auth: PublicAuth,
  created_at: Timestamp,
  updated_at: Timestamp,
  name: v.string(),
  vault_id: v.string(),
});
export const CredentialPage = cursorPageOf(CredentialObject);
export const CredentialDeleted = deletedOf('vault.credential.deleted');

/** `status=active`, or `status[]=active&status[]=archived`; absent means both. */
export const StatusQuery = cursorQuery({ status: v.optional(v.pipe(v.picklist(['active', 'archived']), v.description('Only vaults (credentials) of this status; repeat as status[] for several'))) });

export type CheckedVault = Describes<typeof VaultObject, Vault>;
export type CheckedCredential = Describes<typeof CredentialObject, Credential>;
