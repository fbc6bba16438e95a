import { matchesHashedSecret, newHashedSecret, randomToken } from '../../lib/crypto';

export { SUPPORTED_SCOPES } from '../../declarations/client-policy';

/** A new client secret: 256 bits of randomness, stored only as SHA-256 (CONTRACT §5: never bcrypt). */
export function generateClientSecret(): { secret: string; secretHash: string } {
  const { secret, hash } = newHashedSecret();
  return { secret, secretHash: hash };
}

export function generateClientId(): string {
  return `client_${randomToken(16)}`;
}

/** Constant-time check of a presented secret against the stored hash. */
export function verifyClientSecret(presented: string, secretHash: string): boolean {
  return matchesHashedSecret(presented, secretHash);
}
