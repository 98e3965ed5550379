import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Secrets at rest (provider keys, vault credentials, template/environment env and setup commands): AES-256-GCM with
 * a key derived (HKDF-SHA256) from SVC_SECRETS_KEY. Each sealed value is bound to where it lives (`aad`, e.g.
 * `vault_credentials:<tenant>:<id>`), so a ciphertext copied into another row or tenant does not open.
 * Format: `v1.<iv>.<ciphertext>.<tag>`, each part base64url.
 */
export interface SecretBox {
  seal(plaintext: string, aad: string): string;
  open(sealed: string, aad: string): string;
}

export function createSecretBox(secret: string): SecretBox {
  const key = Buffer.from(hkdfSync('sha256', secret, 'svc-secrets', 'aes-256-gcm v1', 32));
  return {
    seal(plaintext, aad) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(aad, 'utf8'));
      const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return ['v1', iv.toString('base64url'), ct.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
    },
    open(sealed, aad) {
      const [version, iv, ct, tag] = sealed.split('.');
      if (version !== 'v1' || iv === undefined || ct === undefined || tag === undefined) throw new Error('sealed secret: unknown format');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(aad, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}

/** Seals a JSON value; `openJson` reverses it. */
export function sealJson(box: SecretBox, value: unknown, aad: string): string {
  return box.seal(JSON.stringify(value), aad);
}

export function openJson<T>(box: SecretBox, sealed: string, aad: string): T {
  return JSON.parse(box.open(sealed, aad)) as T;
}
