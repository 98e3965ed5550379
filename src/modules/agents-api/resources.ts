import type { Hono, MiddlewareHandler } from 'hono';
import type { ConductorServices } from '../conductor/index.ts';
import { forbidden } from '../../shared/errors.ts';
import type { AgentsEnv } from './context.ts';
import type { ResourceDeps } from './deps.ts';
import { environmentsRoutes } from './environments/environments.routes.ts';
import { keysRoutes } from './extensions/keys.routes.ts';
import { providersRoutes } from './extensions/providers.routes.ts';
import { usageRoutes } from './extensions/usage.routes.ts';
import { filesRoutes } from './files/files.routes.ts';
import { createSecretBox } from './secret-box.ts';
import { skillsRoutes } from './skills/skills.routes.ts';
import { vaultsRoutes } from './vaults/vaults.routes.ts';

/** The deps of the resource services: the conductor's database and a secret box keyed by SVC_SECRETS_KEY. */
export function createResourceDeps(conductor: ConductorServices): ResourceDeps {
  return { db: conductor.db, box: createSecretBox(conductor.secretsKey) };
}

/**
 * Mounts the `/v1` resource families that are not agents or sessions: files, skills, vaults (at `/vaults`),
 * environment templates and environments. Sessions use the same deps at run time: `providerKey(resources, …)`,
 * `createEnvironment(resources, …)`, `resolveCredential(resources, …)`.
 */
export function mountResources(v1: Hono<AgentsEnv>, deps: ResourceDeps): void {
  v1.route('/files', filesRoutes(deps));
  v1.route('/skills', skillsRoutes(deps));
  v1.route('/vaults', vaultsRoutes(deps));
  v1.route('/agents/environments', environmentsRoutes(deps));
}

/** Mounts `/api/providers…`, `/api/keys…` and `/api/usage…` on the extension app. */
export function mountExtensions(api: Hono<AgentsEnv>, deps: ResourceDeps, conductor: ConductorServices): void {
  api.route('/', providersRoutes(deps));
  api.route('/', keysRoutes(conductor.keyDeps));
  api.route('/', usageRoutes(conductor.db));
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Viewers may only read: any other method is 403 before a handler runs (as on `/api`). */
export const denyViewerWrites: MiddlewareHandler<AgentsEnv> = async (c, next) => {
  if (c.get('principal').role === 'viewer' && !SAFE_METHODS.has(c.req.method)) throw forbidden('role viewer may only read');
  await next();
};
