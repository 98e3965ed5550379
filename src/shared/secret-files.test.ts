import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveSecret } from './secret-files.ts';

let dataDir: string;
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

describe('secret files', () => {
  it('generates a secret once into the secrets folder, 0700 and 0600, and reads it back', () => {
    dataDir = mkdtempSync(join(tmpdir(), 'svc-secrets-'));
    const dir = join(dataDir, 'secrets');
    const first = resolveSecret({ configured: undefined, dir, file: 'pepper', persist: true, legacyDir: dataDir });
    expect(first).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(resolveSecret({ configured: undefined, dir, file: 'pepper', persist: true, legacyDir: dataDir })).toBe(first);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, 'pepper')).mode & 0o777).toBe(0o600);
  });

  it('moves a secret an older svc left in the data folder, so the data folder keeps its keys', () => {
    dataDir = mkdtempSync(join(tmpdir(), 'svc-secrets-'));
    writeFileSync(join(dataDir, 'run-token-key'), 'old-key-from-before\n', { mode: 0o644 });
    const value = resolveSecret({ configured: undefined, dir: join(dataDir, 'secrets'), file: 'run-token-key', persist: true, legacyDir: dataDir });
    expect(value).toBe('old-key-from-before');
    expect(existsSync(join(dataDir, 'run-token-key'))).toBe(false);
    expect(readFileSync(join(dataDir, 'secrets', 'run-token-key'), 'utf8')).toBe('old-key-from-before\n');
    expect(statSync(join(dataDir, 'secrets', 'run-token-key')).mode & 0o777).toBe(0o600);
  });

  it('tightens a secrets folder left open, prefers a configured value and keeps nothing on disk when told not to', () => {
    dataDir = mkdtempSync(join(tmpdir(), 'svc-secrets-'));
    const dir = join(dataDir, 'secrets');
    resolveSecret({ configured: undefined, dir, file: 'a', persist: true });
    chmodSync(dir, 0o755);
    resolveSecret({ configured: undefined, dir, file: 'a', persist: true });
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(resolveSecret({ configured: 'given-value', dir, file: 'b', persist: true })).toBe('given-value');
    expect(resolveSecret({ configured: undefined, dir, file: 'c', persist: false })).not.toBe(resolveSecret({ configured: undefined, dir, file: 'c', persist: false }));
    expect(existsSync(join(dir, 'b')) || existsSync(join(dir, 'c'))).toBe(false);
  });
});
