import { describe, expect, it } from 'vitest';
import { createSecretBox, openJson, sealJson } from './secret-box.ts';

describe('secret box', () => {
  const box = createSecretBox('a-secrets-key-of-some-length');

  it('seals to ciphertext that does not contain the secret and opens back to it', () => {
    const sealed = box.seal('sk-live-very-secret', 'provider_keys:t1:openai');
    expect(sealed).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(sealed).not.toContain('very-secret');
    expect(box.open(sealed, 'provider_keys:t1:openai')).toBe('sk-live-very-secret');
    expect(box.seal('same', 'a')).not.toBe(box.seal('same', 'a')); // fresh IV each time
  });

  it('refuses a ciphertext moved to another row or tenant, tampered with, or opened with another key', () => {
    const sealed = box.seal('token', 'vault_credentials:t1:cred_1');
    expect(() => box.open(sealed, 'vault_credentials:t2:cred_1')).toThrow();
    const [v, iv, ct, tag] = sealed.split('.');
    const flipped = Buffer.from(ct, 'base64url');
    flipped[0] ^= 1;
    expect(() => box.open([v, iv, flipped.toString('base64url'), tag].join('.'), 'vault_credentials:t1:cred_1')).toThrow();
    expect(() => createSecretBox('another-secrets-key-entirely').open(sealed, 'vault_credentials:t1:cred_1')).toThrow();
  });

  it('round-trips JSON values', () => {
    const value = { env: { A: '1' }, setup_commands: [{ command: 'make', cwd: '/workspace' }] };
    expect(openJson(box, sealJson(box, value, 'x'), 'x')).toEqual(value);
  });
});
