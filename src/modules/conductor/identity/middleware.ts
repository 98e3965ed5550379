import type { MiddlewareHandler } from 'hono';
import { authenticate, type AuthDeps, type Principal } from './auth.ts';
import { readOnlyViewers } from './guards.ts';

export type IdentityEnv = { Variables: { principal: Principal } };

/**
 * Authenticates every request; the tenant comes only from the credential. Viewers may only read. A request without a
 * bearer may already carry the principal of the dashboard's cookie session (dashboard/api-session.ts, mounted before
 * /api: it checks the session, its key and the CSRF token of writes); a bearer always wins.
 */
export function requireAuth(deps: AuthDeps): MiddlewareHandler<IdentityEnv> {
  const viewers = readOnlyViewers<IdentityEnv>();
  return async (c, next) => {
    const header = c.req.header('authorization');
    const fromSession = header === undefined ? c.get('principal') : undefined;
    c.set('principal', fromSession?.authKind === 'session' ? fromSession : await authenticate(deps, header));
    await viewers(c, next);
  };
}
