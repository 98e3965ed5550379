import { createHmac, createSecretKey, randomBytes, timingSafeEqual, type KeyObject } from 'node:crypto';

/** Tenant API keys: `ao_<env>_<random>`, stored only as HMAC-SHA256 under the pepper. */
const RANDOM_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export const KEY_PATTERN = /^ao_([a-z0-9]+)_([A-Za-z0-9]{16,128})$/;

export function mintKeyToken(env: string): string {
  const bytes = randomBytes(32);
  let random = '';
  for (const b of bytes) random += RANDOM_ALPHABET[b % RANDOM_ALPHABET.length];
  return `ao_${env}_${random}`;
}

export function hashKey(pepper: string, token: string): string {
  return createHmac('sha256', pepperKey(pepper)).update(token).digest('hex');
}

/** The pepper as a KeyObject, made once: an HMAC keyed by a string imports the key on every call (about 6× the cost). */
const pepperKeys = new Map<string, KeyObject>();
function pepperKey(pepper: string): KeyObject {
  let key = pepperKeys.get(pepper);
  if (!key) {
    if (pepperKeys.size >= 16) pepperKeys.clear(); // one pepper per deployment; tests start many
    pepperKeys.set(pepper, (key = createSecretKey(Buffer.from(pepper, 'utf8'))));
  }
  return key;
}

/** A short, non-secret prefix for listings: `ao_test_AbCd…`. */
export function keyPrefix(token: string): string {
  const m = KEY_PATTERN.exec(token);
  return m ? `ao_${m[1]}_${m[2].slice(0, 4)}` : token.slice(0, 8);
}

export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
