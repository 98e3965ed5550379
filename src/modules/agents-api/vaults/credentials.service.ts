import { withTenant } from '../../../db/index.ts';
import type { ResourceStatus } from '../../../db/types.ts';
import { prefixedId } from '../../../shared/ids.ts';
import { badRequest } from '../../../shared/errors.ts';
import { checkUrl } from '../../../shared/egress/index.ts';
import { seconds, type ResourceDeps } from '../deps.ts';
import { cursorPage, deletedObject, found, type CursorPage, type CursorQuery } from '../../crud/index.ts';
import { deleteCredentialRow, insertCredential, lockCredential, selectCredential, selectCredentials, updateCredentialAuth } from './vaults.repo.ts';
import { openJson, sealJson } from '../secret-box.ts';
import { rotateAuth, splitAuth, type AuthCreateInput, type AuthRotateInput, type AuthSecrets, type PublicAuth } from './credential-auth.ts';
import { findVault } from './vaults.service.ts';

/**
 * Vault credentials: the public half of `auth` in clear, the secrets sealed with the secret box (bound to tenant and
 * credential id). Responses are built from the public half only, so no secret can reach a response.
 */
export interface Credential {
  id: string;
  auth: PublicAuth;
  created_at: number;
  name: string;
  object: 'vault.credential';
  updated_at: number;
  vault_id: string;
}

type Row = { id: string; vault_id: string; name: string; auth: Record<string, unknown>; created_at: Date; updated_at: Date };
const toCredential = (r: Row): Credential => ({
  id: r.id,
  auth: r.auth as PublicAuth,
  created_at: seconds(r.created_at),
  name: r.name,
  object: 'vault.credential',
  updated_at: seconds(r.updated_at),
  vault_id: r.vault_id,
});
const aad = (tenantId: string, id: string) => `vault_credentials:${tenantId}:${id}`;

export async function createCredential(deps: ResourceDeps, tenantId: string, vaultId: string, input: { name: string; auth: AuthCreateInput }): Promise<Credential> {
  const { pub, secrets } = splitAuth(input.auth);
  // the token endpoint is the one URL of a credential the server calls (mcp-auth.ts): it passes the address policy
  const problem = pub.type === 'mcp_oauth' && pub.refresh ? checkUrl(pub.refresh.token_endpoint, deps.privateAddresses ?? 'allow') : undefined;
  if (problem) throw badRequest(`auth.refresh.token_endpoint: ${problem}`);
  const id = prefixedId('cred');
  const row = await withTenant(deps.db, tenantId, async (tx) => {
    await findVault(tx, vaultId);
    return insertCredential(tx, { id, tenantId, vaultId, name: input.name, auth: pub, sealed: sealJson(deps.box, secrets, aad(tenantId, id)) });
  });
  return toCredential(row);
}

export async function getCredential(deps: ResourceDeps, tenantId: string, vaultId: string, id: string): Promise<Credential> {
  return withTenant(deps.db, tenantId, async (tx) => {
    await findVault(tx, vaultId);
    return toCredential(found(await selectCredential(tx, vaultId, id), `No such credential: ${id}`));
  });
}

export async function listCredentials(deps: ResourceDeps, tenantId: string, vaultId: string, cursor: CursorQuery, status: ResourceStatus[] | undefined): Promise<CursorPage<Credential>> {
  const rows = await withTenant(deps.db, tenantId, async (tx) => {
    await findVault(tx, vaultId);
    return selectCredentials(tx, vaultId, cursor, status);
  });
  return cursorPage(rows.map(toCredential), cursor.limit);
}

export async function rotateCredential(deps: ResourceDeps, tenantId: string, vaultId: string, id: string, auth: AuthRotateInput): Promise<Credential> {
  return withTenant(deps.db, tenantId, async (tx) => {
    await findVault(tx, vaultId);
    const row = found(await lockCredential(tx, vaultId, id), `No such credential: ${id}`);
    const next = rotateAuth(row.auth as PublicAuth, openJson<AuthSecrets>(deps.box, row.sealed, aad(tenantId, id)), auth);
    const updated = await updateCredentialAuth(tx, id, next.pub, sealJson(deps.box, next.secrets, aad(tenantId, id)));
    return toCredential(updated);
  });
}

export async function deleteCredential(deps: ResourceDeps, tenantId: string, vaultId: string, id: string) {
  const gone = await withTenant(deps.db, tenantId, async (tx) => {
    await findVault(tx, vaultId);
    return deleteCredentialRow(tx, vaultId, id);
  });
  found(gone, `No such credential: ${id}`);
  return deletedObject(id, 'vault.credential.deleted');
}
