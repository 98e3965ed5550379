import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Process secrets that dev deployments may leave unset: the API-key pepper, the run-token signing key, the secrets key
 * and the internal token. A configured value wins; otherwise one is generated once and kept in the secrets folder
 * (`<SVC_DATA_DIR>/secrets`, mode 0700, files 0600), which no sandbox mounts and which lies outside the runner's
 * data folder; or it is kept in memory only when nothing else of the process persists either.
 *
 * Earlier versions kept these files directly in the data folder (`legacyDir`): the first use moves such a file into
 * the secrets folder, so an existing data folder keeps its keys (and its sealed secrets stay readable).
 */
export interface SecretFileOptions {
  configured: string | undefined;
  dir: string;
  file: string;
  persist: boolean;
  legacyDir?: string;
}

export function ensureSecretsDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // an existing folder keeps whatever mode it had: tighten it every time
  chmodSync(dir, 0o700);
}

export function resolveSecret(opts: SecretFileOptions): string {
  if (opts.configured) return opts.configured;
  if (!opts.persist) return randomBytes(32).toString('base64url');
  ensureSecretsDir(opts.dir);
  const path = join(opts.dir, opts.file);
  if (!existsSync(path) && opts.legacyDir) {
    const legacy = join(opts.legacyDir, opts.file);
    try {
      renameSync(legacy, path);
    } catch {
      // no legacy file, or another process moved it first
    }
  }
  if (existsSync(path)) {
    chmodSync(path, 0o600);
    return readFileSync(path, 'utf8').trim();
  }
  const value = randomBytes(32).toString('base64url');
  try {
    writeFileSync(path, value + '\n', { mode: 0o600, flag: 'wx' });
  } catch {
    return readFileSync(path, 'utf8').trim(); // another process wrote it first
  }
  chmodSync(path, 0o600);
  return value;
}
