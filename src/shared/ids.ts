import { randomBytes, createHash } from 'node:crypto';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** A url-safe random id of `length` lowercase letters and digits. */
export function randomId(length = 16): string {
  const bytes = randomBytes(length);
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[bytes[i] % ALPHABET.length];
  return out;
}

export function prefixedId(prefix: string, length = 16): string {
  return `${prefix}_${randomId(length)}`;
}

/** First 8 hex characters of the SHA-256 of a runner base URL: the routing hash inside session ids. */
export function runnerHash(baseUrl: string): string {
  return createHash('sha256').update(baseUrl).digest('hex').slice(0, 8);
}

/** Session ids embed the owning runner's hash so any conductor can route them: `sess-<hash>-<random>`. */
export function newSessionId(hash: string): string {
  return `sess-${hash}-${randomId(16)}`;
}

export function runnerHashOfSession(sessionId: string): string | undefined {
  const m = /^sess-([0-9a-f]{8})-/.exec(sessionId);
  return m ? m[1] : undefined;
}

/**
 * The name prefix of the profile the `/v1` agents API makes for each of its sessions (the agent's configuration,
 * private to that session). Reserved: `/api/profiles` refuses it, and `/api/sessions` marks such sessions `origin: "v1"`.
 */
export const AGENT_SESSION_PROFILE_PREFIX = 'agent-session-';

/** Run and session ids supplied by clients: 1-128 letters, digits, underscore, hyphen. */
export const CLIENT_ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;
