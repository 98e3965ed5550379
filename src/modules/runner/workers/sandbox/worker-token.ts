import { WORKER_TOKEN_TTL_MS } from '../../../../contracts/sandbox-worker.ts';
import { unauthorized } from '../../../../shared/errors.ts';

/**
 * Worker tokens (seed 000, "Authentication" 7): HS256 JWTs signed by the runner with SVC_WORKER_TOKEN_SECRET, naming
 * the tenant (`ten`) and session (`sid`) a sandbox worker serves. Two audiences: `svc-worker` for the callback API
 * (24 hours) and `svc-mcp` for the session MCP endpoint of a sandbox session (`svc_worker_token`; 2 hours for a run
 * without a deadline, the seed's rule). Anything else — missing, malformed, expired, signed by another key, another
 * session's or another tenant's — is 401 `invalid or missing worker token…`.
 */
export type WorkerTokenAudience = 'svc-worker' | 'svc-mcp';

export const MCP_TOKEN_TTL_MS = 2 * 3_600_000;
const MCP_GRACE_MS = 5 * 60_000;

/**
 * Lifetime of a sandbox run's MCP token (seed 000, "Limits"): 2 hours for a run without a deadline; with one, the
 * time left plus 5 minutes' grace, at least 5 minutes and at most 24 hours. Runs carry no deadline yet.
 */
export function mcpTokenTtlMs(deadlineMs: number | undefined, now = Date.now()): number {
  if (deadlineMs === undefined) return MCP_TOKEN_TTL_MS;
  return Math.min(Math.max(deadlineMs - now + MCP_GRACE_MS, MCP_GRACE_MS), WORKER_TOKEN_TTL_MS);
}
/** The variable that configures the key; named in the error of a run that could not get a token. */
export const SIGNING_CONFIG = 'SVC_WORKER_TOKEN_SECRET';
/** HS256 wants a key of at least 256 bits. */
const MIN_KEY_BYTES = 32;

export interface WorkerTokens {
  /** Throws an Error naming SVC_WORKER_TOKEN_SECRET when no usable key is configured or signing fails. */
  mint(aud: WorkerTokenAudience, claims: { tenant: string; sessionId: string }, ttlMs?: number): Promise<string>;
  /** Resolves the claims, or throws 401 `invalid or missing worker token: <why>`. */
  verify(aud: WorkerTokenAudience, token: string | undefined, expect: { tenant?: string; sessionId: string }): Promise<{ tenant: string; sessionId: string }>;
}

export function createWorkerTokens(secret: string | undefined, now: () => number = Date.now): WorkerTokens {
  const key = secret ? new TextEncoder().encode(secret) : undefined;
  const unusable = !key
    ? `no signing key: ${SIGNING_CONFIG} is not set`
    : key.byteLength < MIN_KEY_BYTES
      ? `${SIGNING_CONFIG} is too short (${key.byteLength} bytes; at least ${MIN_KEY_BYTES})`
      : undefined;
  const bad = (why: string) => unauthorized(`invalid or missing worker token: ${why}`);

  return {
    async mint(aud, claims, ttlMs = aud === 'svc-worker' ? WORKER_TOKEN_TTL_MS : MCP_TOKEN_TTL_MS) {
      if (unusable) throw new Error(`cannot mint a worker token (${unusable})`);
      let token: string;
      try {
        const iat = Math.floor(now() / 1000);
        const { SignJWT } = await import('jose');
        token = await new SignJWT({ ten: claims.tenant, sid: claims.sessionId })
          .setProtectedHeader({ alg: 'HS256' })
          .setAudience(aud)
          .setIssuedAt(iat)
          .setExpirationTime(Math.floor((now() + ttlMs) / 1000))
          .sign(key!);
      } catch (err) {
        throw new Error(`cannot mint a worker token with ${SIGNING_CONFIG}: ${err instanceof Error ? err.message : String(err)}`);
      }
      if (!token) throw new Error(`cannot mint a worker token with ${SIGNING_CONFIG}: the token came out empty`);
      return token;
    },
    async verify(aud, token, expect) {
      if (!token) throw bad('none given');
      if (unusable) throw bad('this runner has no signing key');
      let payload: Record<string, unknown>;
      try {
        const { jwtVerify } = await import('jose');
        ({ payload } = await jwtVerify(token, key!, { audience: aud, algorithms: ['HS256'], currentDate: new Date(now()) }));
      } catch (err) {
        const code = (err as { code?: string }).code;
        throw bad(code === 'ERR_JWT_EXPIRED' ? 'expired' : code === 'ERR_JWT_CLAIM_VALIDATION_FAILED' ? 'wrong audience' : 'not a token signed by this runner');
      }
      if (typeof payload.exp !== 'number') throw bad('no expiry');
      if (payload.sid !== expect.sessionId) throw bad('it names another session');
      if (typeof payload.ten !== 'string' || (expect.tenant !== undefined && payload.ten !== expect.tenant)) throw bad('it names another tenant');
      return { tenant: payload.ten, sessionId: payload.sid as string };
    },
  };
}
