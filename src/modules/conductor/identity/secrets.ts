import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Process secrets that dev deployments may leave unset: the API-key pepper and the run-token signing key.
 * Configured values win; otherwise they are generated once and kept (mode 0600) in the data directory, or kept in
 * memory only when the database is in memory too.
 */
export function resolveSecret(opts: { configured: string | undefined; dataDir: string; file: string; persist: boolean }): string {
  if (opts.configured) return opts.configured;
  if (!opts.persist) return randomBytes(32).toString('base64url');
  const path = join(opts.dataDir, opts.file);
  if (existsSync(path)) return readFileSync(path, 'utf8').trim();
  mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 });
  const value = randomBytes(32).toString('base64url');
  try {
    writeFileSync(path, value + '\n', { mode: 0o600, flag: 'wx' });
  } catch {
    return readFileSync(path, 'utf8').trim(); // another process wrote it first
  }
  chmodSync(path, 0o600);
  return value;
}
