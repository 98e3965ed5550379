import { timingSafeEqual } from 'node:crypto';

/** Constant-time string comparison for secrets (tokens, signatures), so they cannot be guessed byte by byte from timing. */
export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
