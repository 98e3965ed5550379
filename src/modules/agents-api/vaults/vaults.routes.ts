import { doc } from '../../../shared/route-doc.ts';
import { Hono, type Context } from 'hono';
import * as v from 'valibot';
import type { ResourceStatus } from '../../../db/types.ts';
import { badRequest } from '../../../shared/errors.ts';
import { readJson } from '../../../shared/http.ts';
import type { AgentsEnv } from '../context.ts';
import type { ResourceDeps } from '../deps.ts';
import { readCursor } from '../../crud/index.ts';
import { Metadata, TrimmedName } from '../validation.ts';
import { AuthCreate, AuthRotate } from './credential-auth.ts';
import * as credentials from './credentials.service.ts';
import { createVault, deleteVault, getVault, listVaults } from './vaults.service.ts';
import { READ_ERRORS, WRITE_ERRORS } from '../wire.schema.ts';
import { CredentialDeleted, CredentialObject, CredentialPage, StatusQuery, VaultDeleted, VaultObject, VaultPage } from './vaults.schema.ts';

const CreateVault = v.object({ name: v.optional(v.nullable(TrimmedName)), metadata: v.optional(v.nullable(Metadata)) });
const CreateCredential = v.object({ name: TrimmedName, auth: AuthCreate });
const RotateCredential = v.object({ auth: AuthRotate });

const DOCS = {
  create: doc({ summary: 'Create a vault', description: "A named container of MCP credentials that sessions attach with `vault_ids`; their MCP servers are then called with the vault's credentials.", body: CreateVault, response: VaultObject, errors: WRITE_ERRORS }),
  list: doc({ summary: 'List vaults', description: 'The vaults of the organisation, newest first by default.', query: StatusQuery, response: VaultPage, errors: READ_ERRORS }),
  get: doc({ summary: 'Get a vault', description: 'One vault: its name and metadata.', response: VaultObject, errors: READ_ERRORS }),
  delete: doc({ summary: 'Delete a vault', description: 'Deletes the vault and its credentials.', response: VaultDeleted, errors: WRITE_ERRORS }),
  createCredential: doc({
    summary: 'Add a credential to a vault',
    description: "Stores how to authenticate to one MCP server: a static bearer token, or an OAuth access token with an optional refresh configuration. Secrets (tokens, client secret) are stored sealed and never returned.",
    body: CreateCredential,
    response: CredentialObject,
    errors: WRITE_ERRORS,
  }),
  listCredentials: doc({ summary: "List a vault's credentials", description: 'The credentials of the vault, newest first by default, without their secrets.', query: StatusQuery, response: CredentialPage, errors: READ_ERRORS }),
  getCredential: doc({ summary: 'Get a credential', description: 'One credential without its secrets.', response: CredentialObject, errors: READ_ERRORS }),
  rotateCredential: doc({
    summary: "Rotate a credential's secrets",
    description: 'Replaces the secrets sent (omitted or null ones are kept); the authentication method, MCP server URL, OAuth client and token endpoint cannot change. A new `access_token` clears `expires_at` unless one is given.',
    body: RotateCredential,
    response: CredentialObject,
    errors: WRITE_ERRORS,
  }),
  deleteCredential: doc({ summary: 'Delete a credential', description: 'Deletes the credential and its secrets.', response: CredentialDeleted, errors: WRITE_ERRORS }),
};

/** Routes 34–42 at `/vaults` (not under `/agents`): vaults and their credentials. There is no vault update route. */
export function vaultsRoutes(deps: ResourceDeps): Hono<AgentsEnv> {
  const tenant = (c: Context<AgentsEnv>) => c.get('principal').tenantId;
  return new Hono<AgentsEnv>()
    .post('/', DOCS.create, async (c) => c.json(await createVault(deps.db, tenant(c), await readJson(c, CreateVault))))
    .get('/', DOCS.list, async (c) => c.json(await listVaults(deps.db, tenant(c), readCursor(c), readStatus(c))))
    .get('/:vault_id', DOCS.get, async (c) => c.json(await getVault(deps.db, tenant(c), c.req.param('vault_id'))))
    .delete('/:vault_id', DOCS.delete, async (c) => c.json(await deleteVault(deps.db, tenant(c), c.req.param('vault_id'))))
    .post('/:vault_id/credentials', DOCS.createCredential, async (c) => c.json(await credentials.createCredential(deps, tenant(c), c.req.param('vault_id'), await readJson(c, CreateCredential))))
    .get('/:vault_id/credentials', DOCS.listCredentials, async (c) =>
      c.json(await credentials.listCredentials(deps, tenant(c), c.req.param('vault_id'), readCursor(c), readStatus(c))),
    )
    .get('/:vault_id/credentials/:credential_id', DOCS.getCredential, async (c) =>
      c.json(await credentials.getCredential(deps, tenant(c), c.req.param('vault_id'), c.req.param('credential_id'))),
    )
    .post('/:vault_id/credentials/:credential_id', DOCS.rotateCredential, async (c) => {
      const { auth } = await readJson(c, RotateCredential);
      return c.json(await credentials.rotateCredential(deps, tenant(c), c.req.param('vault_id'), c.req.param('credential_id'), auth));
    })
    .delete('/:vault_id/credentials/:credential_id', DOCS.deleteCredential, async (c) =>
      c.json(await credentials.deleteCredential(deps, tenant(c), c.req.param('vault_id'), c.req.param('credential_id'))),
    );
}

/** `status=active`, or `status[]=active&status[]=archived` (the SDK's bracket arrays); absent or empty means both. */
function readStatus(c: Context): ResourceStatus[] | undefined {
  const values = [...(c.req.queries('status') ?? []), ...(c.req.queries('status[]') ?? [])].filter((s) => s !== '');
  if (values.length === 0) return undefined;
  for (const s of values) if (s !== 'active' && s !== 'archived') throw badRequest(`status: expected active or archived, received "${s}"`);
  return values as ResourceStatus[];
}
