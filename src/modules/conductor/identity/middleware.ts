import type { MiddlewareHandler } from 'hono';
import { authenticate, type AuthDeps, type Principal } from './auth.ts';
import { readOnlyViewers } from './guards.ts';

export type IdentityEnv = { Variables: { principal: Principal } };

/** Authenticates every request; the tenant comes only from the credential. Viewers may only read. */
export function requireAuth(deps: AuthDeps): MiddlewareHandler<IdentityEnv> {
  const viewers = readOnlyViewers<IdentityEnv>();
  return async (c, next) => {
    c.set('principal', await authenticate(deps, c.req.header('authorization')));
    await viewers(c, next);
  };
}
