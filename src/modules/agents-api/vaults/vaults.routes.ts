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

const CreateVault = v.object({ name: v.optional(v.nullable(TrimmedName)), metadata: v.optional(v.nullable(Metadata)) });
const CreateCredential = v.object({ name: TrimmedName, auth: AuthCreate });
const RotateCredential = v.object({ auth: AuthRotate });

/** Routes 34–42 at `/vaults` (not under `/agents`): vaults and their credentials. There is no vault update route. */
export function vaultsRoutes(deps: ResourceDeps): Hono<AgentsEnv> {
  const tenant = (c: Context<AgentsEnv>) => c.get('principal').tenantId;
  return new Hono<AgentsEnv>()
    .post('/', doc({ body: CreateVault }), async (c) => c.json(await createVault(deps.db, tenant(c), await readJson(c, CreateVault))))
    .get('/', async (c) => c.json(await listVaults(deps.db, tenant(c), readCursor(c), readStatus(c))))
    .get('/:vault_id', async (c) => c.json(await getVault(deps.db, tenant(c), c.req.param('vault_id'))))
    .delete('/:vault_id', async (c) => c.json(await deleteVault(deps.db, tenant(c), c.req.param('vault_id'))))
    .post('/:vault_id/credentials', doc({ body: CreateCredential }), async (c) => c.json(await credentials.createCredential(deps, tenant(c), c.req.param('vault_id'), await readJson(c, CreateCredential))))
    .get('/:vault_id/credentials', async (c) =>
      c.json(await credentials.listCredentials(deps, tenant(c), c.req.param('vault_id'), readCursor(c), readStatus(c))),
    )
    .get('/:vault_id/credentials/:credential_id', async (c) =>
      c.json(await credentials.getCredential(deps, tenant(c), c.req.param('vault_id'), c.req.param('credential_id'))),
    )
    .post('/:vault_id/credentials/:credential_id', doc({ body: RotateCredential }), async (c) => {
      const { auth } = await readJson(c, RotateCredential);
      return c.json(await credentials.rotateCredential(deps, tenant(c), c.req.param('vault_id'), c.req.param('credential_id'), auth));
    })
    .delete('/:vault_id/credentials/:credential_id', async (c) =>
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
