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

/** Run and session ids supplied by clients: 1-128 letters, digits, underscore, hyphen. */
export const CLIENT_ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;
