/** Keys are never printed whole: `ao_test_abcd…wxyz` (prefix, first and last four of the random part). */
export function maskKey(key: string | undefined | null): string | null {
  if (!key) return null;
  const m = /^(ao_[a-z0-9]+_)([A-Za-z0-9]+)$/.exec(key);
  if (m && m[2].length >= 12) return `${m[1]}${m[2].slice(0, 4)}…${m[2].slice(-4)}`;
  if (key.length >= 16) return `${key.slice(0, 4)}…${key.slice(-4)}`;
  return '****';
}

/** A tenant key as the server issues it: `ao_<env>_<random>`. Other tokens are accepted with a warning. */
export const isTenantKey = (key: string): boolean => /^ao_[a-z0-9]+_[A-Za-z0-9]{16,}$/.test(key);
