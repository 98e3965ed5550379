import type { MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import { forbidden } from '../../../shared/errors.ts';
import { requestOrigin } from '../device/index.ts';
import type { IdentityEnv } from '../identity/index.ts';
import { COOKIE, type SessionCodec } from './session.ts';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
export const CSRF_HEADER = 'x-csrf-token';

/**
 * The dashboard calls the same `/api` routes as any client, as the signed-in key: mounted before `/api`, this turns a
 * request that carries the session cookie and no bearer into that key's principal (requireAuth takes it). Writes must
 * carry the session's CSRF token in `X-CSRF-Token` (a header a cross-site form cannot set) and, when the browser says
 * where they come from, come from this origin; a cross-site request never rides on the cookie.
 */
export function sessionForApi(sessions: SessionCodec): MiddlewareHandler<IdentityEnv> {
  return async (c, next) => {
    if (c.req.header('authorization') !== undefined || !getCookie(c, COOKIE) || c.req.header('sec-fetch-site') === 'cross-site') return next();
    const principal = await sessions.open(c);
    if (!principal) return next(); // an expired or revoked session: /api answers 401 as for no credential
    if (!SAFE_METHODS.has(c.req.method)) {
      const origin = c.req.header('origin');
      if (origin && origin !== requestOrigin(c.req)) throw forbidden('cross-site request refused');
      if (!sessions.checkCsrf(c, c.req.header(CSRF_HEADER))) throw forbidden(`missing or wrong ${CSRF_HEADER} header for a dashboard session`);
    }
    c.set('principal', principal);
    await next();
  };
}
