import { Hono } from 'hono';
import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { inTenant } from '../../crud/index.ts';
import type { IdentityEnv } from '../identity/index.ts';
import { listConnections } from './apps.repo.ts';
import * as v from 'valibot';
import { doc } from '../../../shared/route-doc.ts';

const Providers = v.object({ providers: v.array(v.object({ name: v.string(), configured: v.pipe(v.boolean(), v.description('Whether the operator configured its OAuth client')) })) });
const Connections = v.object({ connections: v.array(v.record(v.string(), v.unknown())) });

/** The providers svc knows how to connect; the operator enables one by configuring its OAuth client. */
export const KNOWN_PROVIDERS = ['github', 'gitlab', 'google', 'jira', 'linear', 'notion', 'slack'] as const;

/**
 * `GET /api/connected-apps/providers` ({providers: [{name, configured}]}) and `GET /api/connected-apps/connections`
 * ({connections: [...]}). Mounted at `/connected-apps`.
 */
export function connectedAppRoutes(deps: { db: Kysely<DB>; configured: readonly string[] }): Hono<IdentityEnv> {
  const names = [...new Set([...KNOWN_PROVIDERS, ...deps.configured])].sort();
  const providers = names.map((name) => ({ name, configured: deps.configured.includes(name) }));
  return new Hono<IdentityEnv>()
    .get('/providers', doc({ summary: 'List app providers', description: 'The apps svc can connect (GitHub, Slack, …) and whether the operator configured each one.', response: Providers }), (c) => c.json({ providers }))
    .get('/connections', doc({ summary: 'List connected apps', description: 'The tenant’s connections to those apps.', response: Connections }), async (c) => c.json({ connections: await inTenant(deps.db, c, (tx) => listConnections(tx)) }));
}
