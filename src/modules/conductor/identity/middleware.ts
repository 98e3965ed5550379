import type { MiddlewareHandler } from 'hono';
import { forbidden } from '../../../shared/errors.ts';
import { authenticate, type AuthDeps, type Principal } from './auth.ts';

export type IdentityEnv = { Variables: { principal: Principal } };

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Authenticates every request; the tenant comes only from the credential. Viewers may only read. */
export function requireAuth(deps: AuthDeps): MiddlewareHandler<IdentityEnv> {
  return async (c, next) => {
    const principal = await authenticate(deps, c.req.header('authorization'));
    if (principal.role === 'viewer' && !SAFE_METHODS.has(c.req.method)) throw forbidden('role viewer may only read');
    c.set('principal', principal);
    await next();
  };
}
