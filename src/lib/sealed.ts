import { createCipheriv, createDecipheriv, hkdfSync, randomBytes, type KeyObject, createSecretKey } from 'node:crypto';

/**
 * Secrets at rest (OIDC private keys, TOTP secrets): AES-256-GCM with a key derived by HKDF-SHA256 from
 * KEYS_SECRET. The `purpose` is bound as associated data, so a value sealed for one use cannot be opened as
 * another. Format: `v1.<iv>.<ciphertext>.<tag>` (base64url parts).
 */
export interface Sealer {
  seal(plaintext: string, purpose: string): string;
  open(sealed: string, purpose: string): string;
}

export class SealedValueError extends Error {
  override name = 'SealedValueError';
}

export function createSealer(keysSecret: string): Sealer {
  const key: KeyObject = createSecretKey(
    Buffer.from(hkdfSync('sha256', Buffer.from(keysSecret, 'utf8'), Buffer.alloc(0), 'service-sso sealed v1', 32)),
  );
  return {
    seal(plaintext, purpose) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(purpose, 'utf8'));
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return ['v1', iv.toString('base64url'), body.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
    },
    open(sealed, purpose) {
      const parts = sealed.split('.');
      if (parts.length !== 4 || parts[0] !== 'v1') throw new SealedValueError('not a sealed value');
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(parts[1], 'base64url'));
        decipher.setAAD(Buffer.from(purpose, 'utf8'));
        decipher.setAuthTag(Buffer.from(parts[3], 'base64url'));
        return Buffer.concat([decipher.update(Buffer.from(parts[2], 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        throw new SealedValueError('sealed value does not open with this KEYS_SECRET');
      }
    },
  };
}
