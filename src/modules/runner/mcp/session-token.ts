import { createHmac, createSecretKey, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Session-scoped MCP tokens (seed 000: "MCP access … requires the session-scoped worker token (query parameter
 * `svc_worker_token`)"). The runner mints one into the `sessionMcpUrl` of every run it hands a worker, so only that
 * session's runs can reach that session's tools; a token names its session and expires (2 hours: the seed's lifetime
 * for a run without a deadline). The signing key is random per runner process and never leaves it: a restarted runner
 * mints new URLs with the next run, and nothing else can make one.
 */
export const SESSION_TOKEN_PARAM = 'svc_worker_token';
export const SESSION_TOKEN_TTL_MS = 2 * 3_600_000;

export interface SessionTokens {
  /** Random per runner process: what a worker's kept MCP connection is valid for (a restarted runner has another). */
  readonly instance: string;
  mint(sessionId: string, ttlMs?: number): string;
  /** True when `token` was minted here for `sessionId` and has not expired. */
  verify(sessionId: string, token: string | undefined): boolean;
}

export function createSessionTokens(now: () => number = Date.now): SessionTokens {
  const key = createSecretKey(randomBytes(32)); // a KeyObject: an HMAC with a raw buffer key imports it every time
  const sign = (payload: string) => createHmac('sha256', key).update(payload).digest('base64url');
  return {
    instance: randomBytes(9).toString('base64url'),
    mint(sessionId, ttlMs = SESSION_TOKEN_TTL_MS) {
      const payload = Buffer.from(JSON.stringify({ s: sessionId, e: now() + ttlMs })).toString('base64url');
      return `${payload}.${sign(payload)}`;
    },
    verify(sessionId, token) {
      if (!token) return false;
      const [payload, mac, extra] = token.split('.');
      if (!payload || !mac || extra !== undefined) return false;
      const expected = Buffer.from(sign(payload));
      const got = Buffer.from(mac);
      if (got.length !== expected.length || !timingSafeEqual(got, expected)) return false;
      try {
        const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { s?: unknown; e?: unknown };
        return claims.s === sessionId && typeof claims.e === 'number' && claims.e > now();
      } catch {
        return false;
      }
    },
  };
}
