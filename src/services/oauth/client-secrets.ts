import { matchesHashedSecret, newHashedSecret, randomToken } from '../../lib/crypto';

/**
 * The scopes a client may hold and request: the spec's six (spec §2.10, §5.9) and `offline_access` (OIDC Core §11,
 * CONTRACT §11), which refresh tokens do not depend on (every code grant gets one, as the spec says) but which OpenID
 * relying parties such as oidc-agent ask for.
 */
export const SUPPORTED_SCOPES = ['openid', 'profile', 'email', 'read', 'write', 'admin', 'offline_access'] as const;

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
