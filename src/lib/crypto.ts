import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A URL-safe random token with `bytes` bytes of entropy (256 bits by default). */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

export function sha256Base64Url(value: string): string {
  return createHash('sha256').update(value, 'ascii').digest('base64url');
}

/** Constant-time comparison of two strings (hashes of equal length in practice). */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a, 'utf8');
  const bb = Buffer.from(b, 'utf8');
  if (ab.length !== bb.length) {
    timingSafeEqual(ab, ab);
    return false;
  }
  return timingSafeEqual(ab, bb);
}

/**
 * A secret shown once and stored hashed (client secrets, SCIM connection tokens, initial access tokens): 256 random
 * bits after a recognisable `prefix`, and the SHA-256 that is all the database keeps. Checked with `matchesHashedSecret`.
 */
export function newHashedSecret(prefix = ''): { secret: string; hash: string } {
  const secret = `${prefix}${randomToken(32)}`;
  return { secret, hash: sha256Hex(secret) };
}

/** Constant-time check of a presented secret against the SHA-256 stored by `newHashedSecret`. */
export function matchesHashedSecret(presented: string, hash: string): boolean {
  return safeEqual(sha256Hex(presented), hash);
}
