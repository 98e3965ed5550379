import { createHmac } from 'node:crypto';
import { safeEqual } from '../../../shared/safe-equal.ts';
import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { withTenant } from '../../../db/index.ts';
import { sessionKey, type Principal } from '../identity/index.ts';

/**
 * The dashboard session: an HttpOnly cookie holding `{tenant, key id, expiry}` signed with a secret derived from the
 * API-key pepper. Every request re-checks the key it was opened with, so revoking that key ends the session.
 */
export const COOKIE = 'svc_dash';
export const SESSION_TTL_S = 12 * 3600;

interface Claims {
  t: string;
  k: string;
  exp: number;
}

export interface SessionCodec {
  open(c: Context): Promise<Principal | undefined>;
  start(c: Context, principal: Principal): void;
  end(c: Context): void;
  /** A token bound to the session cookie, carried by every form that changes something. */
  csrf(c: Context): string;
  checkCsrf(c: Context, token: unknown): boolean;
}

export function createSessions(deps: { db: Kysely<DB>; pepper: string }): SessionCodec {
  const secret = createHmac('sha256', deps.pepper).update('svc-dashboard-session-v1').digest();
  const sign = (payload: string) => createHmac('sha256', secret).update(payload).digest('base64url');

  const decode = (value: string | undefined): Claims | undefined => {
    if (!value) return undefined;
    const [payload, mac] = value.split('.');
    if (!payload || !mac || !safeEqual(sign(payload), mac)) return undefined;
    try {
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Claims;
      return typeof claims.t === 'string' && typeof claims.k === 'string' && claims.exp * 1000 > Date.now() ? claims : undefined;
    } catch {
      return undefined;
    }
  };

  return {
    async open(c) {
      const claims = decode(getCookie(c, COOKIE));
      if (!claims) return undefined;
      const key = await withTenant(deps.db, claims.t, (tx) => sessionKey(tx, claims.t, claims.k));
      if (!key || key.revoked_at || key.deleted || (key.expires_at && new Date(key.expires_at).getTime() <= Date.now())) return undefined;
      return { tenantId: claims.t, tenantName: key.tenantName, role: key.role, authKind: 'session', keyId: key.id, subject: null };
    },
    start(c, principal) {
      const payload = Buffer.from(JSON.stringify({ t: principal.tenantId, k: principal.keyId, exp: Math.floor(Date.now() / 1000) + SESSION_TTL_S })).toString('base64url');
      setCookie(c, COOKIE, `${payload}.${sign(payload)}`, {
        httpOnly: true,
        sameSite: 'Lax',
        path: '/',
        maxAge: SESSION_TTL_S,
        secure: new URL(c.req.url).protocol === 'https:' || c.req.header('x-forwarded-proto') === 'https',
      });
    },
    end(c) {
      deleteCookie(c, COOKIE, { path: '/' });
    },
    csrf(c) {
      return sign(`csrf:${getCookie(c, COOKIE) ?? ''}`);
    },
    checkCsrf(c, token) {
      return typeof token === 'string' && safeEqual(sign(`csrf:${getCookie(c, COOKIE) ?? ''}`), token);
    },
  };
}
